// spec-controller: the one apply loop of every <thing>-spec controller (address,
// route, link, mount, kernel parameter, kernel module, hostname, resolvers in the
// plugins; the engine's extensions). For each spec: hold it with a finalizer, put it
// in effect, write a status per spec that carries, as data, what is in effect
// because of it. When the spec goes: tear the status down first (whoever depends on
// it holds it with a finalizer and is waited for), undo what the status says was
// applied, destroy the status, let the spec go. A spec whose apply failed for a
// while (TryAgain: a server away) is applied again later, less and less often, and
// at once when the spec changes.
import type { ControllerContext, Controller, Input } from './contract.ts';
import type { Resource } from '../resource/resource.ts';
import { sameSpec } from '../spec/spec-equal.ts';
import { isNotFound } from '../state/errors.ts';

export interface SpecStatusBase { state?: string; error?: string }

/** Thrown by apply when a later try may succeed with the same spec: its status is `failed`, and it is tried again. */
export class TryAgain extends Error {}

/** How long a spec that failed with TryAgain waits: `firstMs`, doubled each time, at most `lastMs`. */
export interface RetryPolicy { firstMs: number; lastMs: number }
export const DEFAULT_RETRY: RetryPolicy = { firstMs: 5000, lastMs: 300_000 };

export interface ApplyContext<S, St> {
  /** The spec as a resource (its metadata: when it was declared, its version). */
  resource: Resource<S>;
  /**
   * Writes a status before apply returns (a long apply's progress: fetching, stopping). Only on a step that does
   * something: the statuses wake the controller, and two writes on every reconcile would never let it rest.
   */
  report(status: St): Promise<void>;
}

export interface SpecApplier<S, St extends SpecStatusBase, W> {
  name: string;
  /** The owner its writes carry and the finalizer it holds: its name unless said (the engine's: "engine"). */
  owner?: string;
  namespace: string;
  /** The merged spec type: a strong input. */
  specType: string;
  /** The status per spec (same id): this controller's exclusive output. */
  statusType: string;
  /** The statuses' namespace when it is not the specs' (extensions: specs in config, statuses in runtime). */
  statusNamespace?: string;
  /** The waits between tries of a spec that failed with TryAgain (DEFAULT_RETRY). */
  retry?: RetryPolicy;
  /** What else wakes the controller (the links, the block devices). */
  inputs?: Input[];
  /** What apply and undo need to know, read once per reconcile. */
  observe(ctx: ControllerContext): Promise<W> | W;
  /**
   * Puts the spec in effect (undoing first what `prev` says is applied and the spec no
   * longer wants) and returns the status. Throws with a message for the status.
   */
  apply(id: string, spec: S, prev: St | undefined, world: W, ctx: ApplyContext<S, St>): St | Promise<St>;
  /** The status when apply throws: the spec described, what is still applied, the error. */
  failed(id: string, spec: S, prev: St | undefined, error: string): St;
  /**
   * Takes out of effect what the status says is applied; gone already counts as done. `spec`: the resource being
   * torn down (its annotations may say how), absent when the spec went while the controller was not running.
   */
  undo(id: string, prev: St, world: W, spec?: Resource<S>): void | Promise<void>;
}

export function specController<S, St extends SpecStatusBase, W>(a: SpecApplier<S, St, W>): Controller {
  const statusNs = a.statusNamespace ?? a.namespace;
  const retry = a.retry ?? DEFAULT_RETRY;
  const holder = a.owner ?? a.name;
  return {
    name: a.name,
    ...(a.owner ? { owner: a.owner } : {}),
    inputs: () => [
      { namespace: a.namespace, type: a.specType, kind: 'strong' },
      { namespace: statusNs, type: a.statusType, kind: 'weak' }, // a dependant letting go of a status
      ...(a.inputs ?? []),
    ],
    outputs: () => [{ type: a.statusType, kind: 'exclusive' }],
    async run(ctx) {
      const specPtr = (id: string) => ({ namespace: a.namespace, type: a.specType, id });
      const statusPtr = (id: string) => ({ namespace: statusNs, type: a.statusType, id });
      const warned = new Map<string, string>(); // one log line per distinct failure to undo
      /** Specs waiting to be tried again: the spec that failed, when, and the wait after the next failure. */
      const waiting = new Map<string, { spec: S; due: number; nextMs: number }>();
      let timer: NodeJS.Timeout | undefined;
      ctx.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
      /** Undoes and destroys a status once no dependant holds it; false while one does or undo fails. */
      const retire = async (id: string, prev: Resource<St>, world: W, spec?: Resource<S>): Promise<boolean> => {
        waiting.delete(id);
        if (!(await ctx.state.teardown(statusPtr(id)))) return false;
        try {
          await a.undo(id, prev.spec, world, spec);
        } catch (e) {
          const msg = (e as Error).message;
          if (warned.get(id) !== msg) {
            ctx.log.warn(`${id}: undoing: ${msg}; will retry`);
            warned.set(id, msg);
          }
          return false;
        }
        warned.delete(id);
        await ctx.state.destroy(statusPtr(id));
        return true;
      };
      /** The status of one spec put in effect; a TryAgain failure waits its turn (a changed spec does not). */
      const applyOne = async (r: Resource<S>, prev: St | undefined, world: W): Promise<St> => {
        const id = r.metadata.id;
        const wait = waiting.get(id);
        if (wait && !sameSpec(wait.spec, r.spec)) waiting.delete(id);
        const report = (s: St) => ctx.state.put(statusPtr(id), s).then(() => undefined);
        try {
          const status = await a.apply(id, r.spec, prev, world, { resource: r, report });
          waiting.delete(id);
          return status;
        } catch (e) {
          const message = (e as Error).message;
          if (!(e instanceof TryAgain)) return a.failed(id, r.spec, prev, message);
          const ms = waiting.get(id)?.nextMs ?? retry.firstMs;
          waiting.set(id, { spec: r.spec, due: Date.now() + ms, nextMs: Math.min(ms * 2, retry.lastMs) });
          return a.failed(id, r.spec, prev, `${message} (trying again in ${Math.round(ms / 1000)} s)`);
        }
      };
      while (await ctx.next()) {
        const world = await a.observe(ctx);
        const statusList = await ctx.state.list({ namespace: statusNs, type: a.statusType }) as Resource<St>[];
        const statuses = new Map(statusList.map((r) => [r.metadata.id, r]));
        const seen = new Set<string>();
        for (const r of await ctx.state.list({ namespace: a.namespace, type: a.specType }) as Resource<S>[]) {
          const id = r.metadata.id;
          seen.add(id);
          const prev = statuses.get(id);
          if (r.metadata.phase === 'tearingDown') {
            if (!r.metadata.finalizers.includes(holder)) continue;
            if (!prev || await retire(id, prev, world, r)) await ctx.state.removeFinalizer(specPtr(id));
            continue;
          }
          if (!r.metadata.finalizers.includes(holder)) {
            // The list is a snapshot: a spec no one held yet may be gone already (its merge dropped it).
            try {
              await ctx.state.addFinalizer(specPtr(id));
            } catch (e) {
              if (!isNotFound(e)) throw e;
              continue;
            }
          }
          const wait = waiting.get(id);
          if (prev && wait && sameSpec(wait.spec, r.spec) && wait.due > Date.now()) continue;
          await ctx.state.put(statusPtr(id), await applyOne(r, prev?.spec, world));
        }
        // A status without its spec (the spec went while this plugin was down): undo it too.
        for (const [id, prev] of statuses) if (!seen.has(id)) await retire(id, prev, world);
        for (const id of waiting.keys()) if (!seen.has(id)) waiting.delete(id);
        // One timer, for the spec due first.
        clearTimeout(timer);
        const due = Math.min(...[...waiting.values()].map((w) => w.due));
        if (Number.isFinite(due)) timer = setTimeout(() => ctx.requestReconcile(), Math.max(0, due - Date.now()));
      }
      clearTimeout(timer);
    },
  };
}
