// spec-controller: the one apply loop of every <thing>-spec controller (address,
// route, link, mount, kernel parameter, kernel module, hostname, resolvers). For each
// merged spec: hold it with a finalizer, put it in effect, write a status per spec
// that carries, as data, what is in effect because of it. When the spec goes: tear
// the status down first (whoever depends on it holds it with a finalizer and is
// waited for), undo what the status says was applied, destroy the status, let the
// spec go.
import type { ControllerContext, Controller, Input } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';

export interface SpecStatusBase { state?: string; error?: string }

export interface SpecApplier<S, St extends SpecStatusBase, W> {
  name: string;
  namespace: string;
  /** The merged spec type: a strong input. */
  specType: string;
  /** The status per spec (same id): this controller's exclusive output. */
  statusType: string;
  /** What else wakes the controller (the links, the block devices). */
  inputs?: Input[];
  /** What apply and undo need to know, read once per reconcile. */
  observe(ctx: ControllerContext): Promise<W> | W;
  /**
   * Puts the spec in effect (undoing first what `prev` says is applied and the spec no
   * longer wants) and returns the status. Throws with a message for the status.
   */
  apply(id: string, spec: S, prev: St | undefined, world: W): St | Promise<St>;
  /** The status when apply throws: the spec described, what is still applied, the error. */
  failed(id: string, spec: S, prev: St | undefined, error: string): St;
  /** Takes out of effect what the status says is applied; gone already counts as done. */
  undo(id: string, prev: St, world: W): void | Promise<void>;
}

export function specController<S, St extends SpecStatusBase, W>(a: SpecApplier<S, St, W>): Controller {
  return {
    name: a.name,
    inputs: () => [
      { namespace: a.namespace, type: a.specType, kind: 'strong' },
      { namespace: a.namespace, type: a.statusType, kind: 'weak' }, // a dependant letting go of a status
      ...(a.inputs ?? []),
    ],
    outputs: () => [{ type: a.statusType, kind: 'exclusive' }],
    async run(ctx) {
      const specPtr = (id: string) => ({ namespace: a.namespace, type: a.specType, id });
      const statusPtr = (id: string) => ({ namespace: a.namespace, type: a.statusType, id });
      const warned = new Map<string, string>(); // one log line per distinct failure to undo
      /** Undoes and destroys a status once no dependant holds it; false while one does or undo fails. */
      const retire = async (id: string, prev: Resource<St>, world: W): Promise<boolean> => {
        if (!(await ctx.state.teardown(statusPtr(id)))) return false;
        try {
          await a.undo(id, prev.spec, world);
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
      while (await ctx.next()) {
        const world = await a.observe(ctx);
        const statusList = await ctx.state.list({ namespace: a.namespace, type: a.statusType }) as Resource<St>[];
        const statuses = new Map(statusList.map((r) => [r.metadata.id, r]));
        const seen = new Set<string>();
        for (const r of await ctx.state.list({ namespace: a.namespace, type: a.specType }) as Resource<S>[]) {
          const id = r.metadata.id;
          seen.add(id);
          const prev = statuses.get(id);
          if (r.metadata.phase === 'tearingDown') {
            if (!r.metadata.finalizers.includes(a.name)) continue;
            if (!prev || await retire(id, prev, world)) await ctx.state.removeFinalizer(specPtr(id));
            continue;
          }
          if (!r.metadata.finalizers.includes(a.name)) await ctx.state.addFinalizer(specPtr(id));
          let status: St;
          try {
            status = await a.apply(id, r.spec, prev?.spec, world);
          } catch (e) {
            status = a.failed(id, r.spec, prev?.spec, (e as Error).message);
          }
          await ctx.state.put(statusPtr(id), status);
        }
        // A status without its spec (the spec went while this plugin was down): undo it too.
        for (const [id, prev] of statuses) if (!seen.has(id)) await retire(id, prev, world);
      }
    },
  };
}
