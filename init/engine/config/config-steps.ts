// config-steps: a plan carried out against the state. Creations and updates go through
// admission in rank order (namespaces, definitions, then the rest, with the config's extension
// types registered before the first ordinary resource); deletions in reverse, each waiting for
// its finalizers. The event loop is handed back between writes.
import type { DefinitionInput } from '../../../cosi/meta/definition.ts';
import { newResource } from '../../../cosi/resource/resource.ts';
import { copyResource } from '../../../cosi/state/freeze.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { Admission } from '../../../machinery/config/admission.ts';
import { yielder } from '../../../machinery/config/yielder.ts';
import { byRank, rank, type Step } from './config-plan.ts';

/** Extensions a config declares, by name: the types each defines. */
export type ExtensionTypes = Map<string, DefinitionInput[]>;

export interface StepsTarget {
  state: MemoryState;
  admission: Admission;
  /** Registers an extension's types; called only when `types` holds some. */
  register?: (name: string, types: readonly DefinitionInput[]) => Promise<void>;
}

/** Carries out `steps`; a failure leaves the ones before it done (the caller says so). */
export async function executeSteps(
  steps: readonly Step[], o: StepsTarget, types: ExtensionTypes = new Map(),
): Promise<void> {
  const { state, admission } = o;
  const writes = steps.filter((s) => s.action === 'created' || s.action === 'updated')
    .sort((a, b) => byRank(a.want!, b.want!));
  // The state answers at once, so thousands of writes would never let I/O in: slices of 10 ms.
  const pause = yielder();
  let extensionTypesRegistered = types.size === 0;
  for (const s of writes) {
    await pause();
    const w = s.want!;
    if (!extensionTypesRegistered && rank(w) === 2) {
      // Before the first ordinary resource: some may be of these types.
      for (const [name, t] of types) await o.register!(name, t);
      extensionTypesRegistered = true;
    }
    if (s.action === 'created') {
      await state.create(admission.admit(newResource(w, w.spec, { labels: w.labels, annotations: w.annotations }),
        'create'));
    } else {
      const next = copyResource(state.findSync(w) ?? s.current!);
      next.spec = w.spec;
      next.metadata.labels = w.labels;
      next.metadata.annotations = w.annotations;
      await state.update(admission.admit(next, 'update'));
    }
  }
  const deletes = steps.filter((s) => s.action === 'deleted').map((s) => s.current!.metadata);
  // Ordinary resources together (each waits for its finalizers), then definitions, then namespaces.
  for (const r of [2, 1, 0]) {
    await Promise.all(deletes.filter((p) => rank(p) === r).map(async (p) => {
      admission.admitRemoval(p);
      await state.teardownAndDestroy(p);
    }));
  }
}
