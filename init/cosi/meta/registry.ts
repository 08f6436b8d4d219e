// registry: puts namespaces and resource definitions into a state's meta namespace,
// owned by "meta". Every type the system serves is registered here first.
import { newResource } from '../resource/resource.ts';
import { isNotFound } from '../state/errors.ts';
import type { State } from '../state/state.ts';
import { copyResource } from '../state/freeze.ts';
import {
  DEFINITION_TYPE, fillDefinition, META_NAMESPACE, META_OWNER, NAMESPACE_TYPE,
  type DefinitionInput, type NamespaceSpec, type ResourceDefinitionSpec,
} from './definition.ts';

async function upsert(state: State, type: string, id: string, spec: unknown): Promise<void> {
  const p = { namespace: META_NAMESPACE, type, id };
  try {
    const cur = await state.get(p);
    if (JSON.stringify(cur.spec) === JSON.stringify(spec)) return;
    await state.update({ ...copyResource(cur), spec }, { owner: META_OWNER });
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await state.create(newResource(p, spec), { owner: META_OWNER });
  }
}

export async function registerNamespace(state: State, name: string, description: string): Promise<void> {
  await upsert(state, NAMESPACE_TYPE, name, { description } satisfies NamespaceSpec);
}

export async function registerType(state: State, d: DefinitionInput): Promise<ResourceDefinitionSpec> {
  const spec = fillDefinition(d);
  await upsert(state, DEFINITION_TYPE, d.type.toLowerCase(), spec);
  return spec;
}

/** The meta namespace describes itself: its namespace and its two types. */
export async function registerMeta(state: State): Promise<void> {
  await registerNamespace(state, META_NAMESPACE, 'Metadata: namespaces and resource definitions.');
  await registerType(state, {
    type: NAMESPACE_TYPE, defaultNamespace: META_NAMESPACE, aliases: ['ns'],
    printColumns: [{ name: 'Description', jsonPath: '{.description}' }],
  });
  await registerType(state, {
    type: DEFINITION_TYPE, defaultNamespace: META_NAMESPACE, aliases: ['api-resources'],
    printColumns: [{ name: 'Aliases', jsonPath: '{.aliases}' }, { name: 'Default Namespace', jsonPath: '{.defaultNamespace}' }],
  });
}

export async function listDefinitions(state: State): Promise<ResourceDefinitionSpec[]> {
  return (await state.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE })).map((r) => r.spec as ResourceDefinitionSpec);
}
