// merge-controller: the one merge stage (Talos's <thing>-merge). Declared specs of a
// kind, one per source, each with its layer -> one merged spec per key -> the spec
// controller. Two ways to combine the specs of one key:
//   winner  the highest layer's whole spec (within a layer, the lowest id)
//   fields  each field from the highest layer that sets it (a link's MTU from config,
//           its up from the default layer)
// A declared spec is held with a finalizer until what it contributed is gone: deleting
// the only spec of a key tears the merged one down, and the delete returns once the
// spec controller has undone it.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { formatSources, layerOf, layerRank, SOURCES_ANNOTATION, type Layer } from '../../machinery/model/layers.ts';

export { SOURCES_ANNOTATION };

export interface MergeDef<S extends { layer?: Layer }> {
  name: string;
  namespace: string;
  /** The declared type (AddressSpec); a strong input. */
  inputType: string;
  /** The merged type (MergedAddressSpec); this controller's exclusive output. */
  outputType: string;
  /** The merged id a declared spec contributes to (link/address, the link's name, ...). */
  key(spec: S, id: string): string;
  combine: 'winner' | 'fields';
}

interface Source<S> { id: string; spec: S }
interface Declared<S> extends Source<S> { incarnation: string }

/** One state of a resource: its version within its incarnation (a re-created id is created later). */
const incarnation = (r: Resource) => `${r.metadata.id}@${r.metadata.created}.${r.metadata.version}`;

/** The merged spec of one key's sources: the combined fields, layer = the highest contributing layer. */
export function combineSpecs<S extends { layer?: Layer }>(
  how: 'winner' | 'fields', sources: readonly Source<S>[],
): { spec: S; order: Source<S>[] } {
  const order = [...sources]
    .sort((a, b) => layerRank(b.spec) - layerRank(a.spec) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const top = order[0]!;
  if (how === 'winner') return { spec: { ...top.spec, layer: layerOf(top.spec) }, order };
  const merged: Record<string, unknown> = {};
  for (const s of [...order].reverse()) {
    for (const [k, v] of Object.entries(s.spec as Record<string, unknown>)) {
      if (k !== 'layer' && v !== undefined) merged[k] = v;
    }
  }
  return { spec: { ...merged, layer: layerOf(top.spec) } as S, order };
}

export function mergeController<S extends { layer?: Layer }>(d: MergeDef<S>): Controller {
  return {
    name: d.name,
    inputs: () => [
      { namespace: d.namespace, type: d.inputType, kind: 'strong' },
      { namespace: d.namespace, type: d.outputType, kind: 'weak' }, // a spec controller letting go of a merged spec
    ],
    outputs: () => [{ type: d.outputType, kind: 'exclusive' }],
    async run(ctx) {
      const input = (id: string) => ({ namespace: d.namespace, type: d.inputType, id });
      const output = (id: string) => ({ namespace: d.namespace, type: d.outputType, id });
      // Each key's sources and merged spec as last written: a wake rewrites only the keys whose sources or merged
      // spec changed since (one declared spec's write used to recompute and compare every key: 426 compares in
      // PID 1 for the system plugin's 14 kernel parameters at boot).
      const written = new Map<string, string>();
      while (await ctx.next()) {
        const merged = new Map((await ctx.state.list({ namespace: d.namespace, type: d.outputType }))
          .map((r) => [r.metadata.id, incarnation(r)]));
        const declared = await ctx.state.list({ namespace: d.namespace, type: d.inputType }) as Resource<S>[];
        const groups = new Map<string, Declared<S>[]>();
        const leaving: Resource<S>[] = [];
        for (const r of declared) {
          if (r.metadata.phase === 'tearingDown') {
            if (r.metadata.finalizers.includes(d.name)) leaving.push(r);
            continue;
          }
          if (!r.metadata.finalizers.includes(d.name)) await ctx.state.addFinalizer(input(r.metadata.id));
          const k = d.key(r.spec, r.metadata.id);
          const source = { id: r.metadata.id, spec: r.spec, incarnation: incarnation(r) };
          groups.set(k, [...(groups.get(k) ?? []), source]);
        }
        for (const [k, sources] of groups) {
          const from = sources.map((s) => s.incarnation).join(' ');
          if (written.get(k) === `${from} -> ${merged.get(k)}`) continue;
          const { spec, order } = combineSpecs(d.combine, sources);
          const out = await ctx.state.modify(output(k), spec, (r) => {
            r.spec = spec;
            r.metadata.annotations = {
              ...r.metadata.annotations,
              [SOURCES_ANNOTATION]: formatSources(order.map((s) => ({ layer: layerOf(s.spec), id: s.id }))),
            };
          });
          written.set(k, `${from} -> ${incarnation(out)}`);
        }
        for (const k of written.keys()) if (!groups.has(k)) written.delete(k);
        const remaining = new Set(
          await ctx.state.cleanup({ namespace: d.namespace, type: d.outputType }, new Set(groups.keys())),
        );
        // A leaving spec is let go once its key's merged spec no longer needs it: another
        // source still declares the key (the merged spec was rewritten without it), or
        // the merged spec is gone from the kernel and the state.
        for (const r of leaving) {
          const k = d.key(r.spec, r.metadata.id);
          if (groups.has(k) || !remaining.has(k)) await ctx.state.removeFinalizer(input(r.metadata.id));
        }
      }
    },
  };
}
