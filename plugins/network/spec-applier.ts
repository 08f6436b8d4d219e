// spec-applier: the pattern AddressSpec and RouteSpec share. For each spec:
// hold it with a finalizer, apply it to the kernel, and publish a status per spec
// (applied, pending, or error with the reason). The status remembers what was put
// in the kernel, so a changed spec first removes the old one; a spec torn down is
// removed from the kernel before its finalizer is released.
import type { Controller, Input } from '../../init/cosi/controller/contract.ts';
import type { Resource } from '../../init/cosi/resource/resource.ts';
import { LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, type ApplyState, type LinkSpecSpec, type LinkStatusSpec } from './types.ts';

export interface SpecStatusBase { state: ApplyState; link: string; applied?: string; error?: string }

export interface Applier<S> {
  name: string;
  specType: string;
  statusType: string;
  extraInputs?: Input[];
  /** A stable text of what the spec puts in the kernel (stored as status.applied). */
  key(spec: S): string;
  link(spec: S): string;
  /** Applies; throws with a message for the status on failure. heldDown: a LinkSpec
   * says the link is to be down, so the applier must not bring it up. */
  apply(spec: S, link: LinkStatusSpec, heldDown: boolean): void;
  /** Removes what `key` names; gone already is fine. */
  remove(key: string, links: ReadonlyMap<string, LinkStatusSpec>): void;
}

export function specApplier<S>(a: Applier<S>): Controller {
  return {
    name: a.name,
    inputs: () => [
      { namespace: NETWORK_NS, type: a.specType, kind: 'strong' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_SPEC_TYPE, kind: 'weak' },
      ...(a.extraInputs ?? []),
    ],
    outputs: () => [{ type: a.statusType, kind: 'exclusive' }],
    async run(ctx) {
      const sp = (id: string) => ({ namespace: NETWORK_NS, type: a.specType, id });
      const st = (id: string) => ({ namespace: NETWORK_NS, type: a.statusType, id });
      while (await ctx.next()) {
        const links = new Map((await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE })).map((r) => [r.metadata.id, r.spec as LinkStatusSpec]));
        const heldDown = new Set((await ctx.state.list({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE }))
          .filter((r) => r.metadata.phase === 'running' && (r.spec as LinkSpecSpec).up === false).map((r) => r.metadata.id));
        const keep = new Set<string>();
        // One List of the statuses per reconcile, not a Get per spec.
        const statuses = new Map((await ctx.state.list({ namespace: NETWORK_NS, type: a.statusType })).map((r) => [r.metadata.id, r.spec as SpecStatusBase]));
        for (const r of await ctx.state.list({ namespace: NETWORK_NS, type: a.specType }) as Resource<S>[]) {
          const id = r.metadata.id;
          const previous = statuses.get(id);
          if (r.metadata.phase === 'tearingDown') {
            if (!r.metadata.finalizers.includes(a.name)) continue;
            if (previous?.applied) {
              try { a.remove(previous.applied, links); } catch (e) { ctx.log.warn(`${id}: removing ${previous.applied}: ${(e as Error).message}`); }
            }
            await ctx.state.removeFinalizer(sp(id));
            continue;
          }
          keep.add(id);
          if (!r.metadata.finalizers.includes(a.name)) await ctx.state.addFinalizer(sp(id));
          const key = a.key(r.spec);
          const linkName = a.link(r.spec);
          const link = links.get(linkName);
          let status: SpecStatusBase;
          if (previous?.applied && previous.applied !== key) {
            try { a.remove(previous.applied, links); } catch (e) { ctx.log.warn(`${id}: removing the old ${previous.applied}: ${(e as Error).message}`); }
          }
          if (!link) {
            status = { state: 'pending', link: linkName, error: `link "${linkName}" does not exist (yet)` };
          } else {
            try { a.apply(r.spec, link, heldDown.has(linkName)); status = { state: 'applied', link: linkName, applied: key }; } catch (e) {
              status = { state: 'error', link: linkName, error: (e as Error).message };
            }
          }
          await ctx.state.put(st(id), status);
        }
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: a.statusType }, keep);
      }
    },
  };
}
