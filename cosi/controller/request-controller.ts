// request-controller: requests acted on once (an install, an upgrade, a rollback, a power change). A client creates a
// request; the controller hands each new one to its handler, which reports in a status of the same id. One at a
// time, a request that comes while another is handled is refused in its status, naming the one under way. A request
// deleted while handled is withdrawn (the client gave up). Requests there before the controller started are left
// alone: a request is a client's act at a moment, and one replayed from a config file at every boot would repeat
// it.
import type { Resource } from '../resource/resource.ts';
import type { Controller, ControllerContext } from './contract.ts';

export interface RequestHandling<Req, Status> {
  /** The controller's name (unique in its runtime). */
  name: string;
  /** The owner its status writes carry (default its name). */
  owner?: string;
  request: { namespace: string; type: string };
  /** Where each request's status lives (same id); the handler writes it, the controller only to refuse (busy). */
  status?: { namespace: string; type: string };
  /** One request handled at a time; others are refused while it runs. */
  oneAtATime: boolean;
  /** Carries out one request; runs on after the reconcile that started it, for as long as it takes. */
  handle(id: string, spec: Req): Promise<void>;
  /** The status of a request refused because request `running` is under way (one at a time). */
  busy?(id: string, running: string): Status;
  /** The request was deleted while its handler ran. */
  withdrawn?(id: string): void;
}

/** Requests created before the controller is made (not before its run starts: that comes later) are left alone. */

/** Requests by creation, then id: the first of a burst is the one handled. */
const byCreation = (a: Resource, b: Resource) => a.metadata.created - b.metadata.created
  || (a.metadata.id < b.metadata.id ? -1 : a.metadata.id > b.metadata.id ? 1 : 0);

export function requestController<Req, Status>(h: RequestHandling<Req, Status>): Controller {
  const madeAt = Date.now();
  // Kept across restarts of run() (the runtime restarts it after a throw): a request is never handed over twice.
  /** Ids acted on (or left alone), while their request exists: a request made again later is acted on again. */
  const seen = new Set<string>();
  const active = new Set<string>();
  let running: string | undefined;
  return {
    name: h.name,
    ...(h.owner ? { owner: h.owner } : {}),
    inputs: () => [{ ...h.request, kind: 'weak' }],
    // Shared: an upgrade and a rollback report in the same status type.
    outputs: () => (h.status ? [{ type: h.status.type, kind: 'shared' as const }] : []),
    async run(ctx: ControllerContext) {
      while (await ctx.next()) {
        const requests = await ctx.state.list(h.request);
        const present = new Set(requests.map((r) => r.metadata.id));
        for (const id of seen) {
          if (present.has(id)) continue;
          seen.delete(id);
          if (active.has(id)) h.withdrawn?.(id);
        }
        for (const r of requests.filter((x) => !seen.has(x.metadata.id)).sort(byCreation)) {
          const id = r.metadata.id;
          seen.add(id);
          if (r.metadata.created < madeAt) {
            ctx.log.info(`${h.request.type} "${id}" was there before this controller was made: left alone`);
            continue;
          }
          if (h.oneAtATime && running !== undefined) {
            if (h.busy && h.status) await ctx.state.put({ ...h.status, id }, h.busy(id, running));
            continue;
          }
          if (h.oneAtATime) running = id;
          active.add(id);
          void h.handle(id, r.spec as Req).catch((e: unknown) => {
            ctx.log.error(`${h.request.type} "${id}": ${(e as Error).stack ?? e}`);
          }).finally(() => {
            active.delete(id);
            if (running === id) running = undefined;
          });
        }
      }
    },
  };
}
