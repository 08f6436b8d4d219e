// registry: puts namespaces and resource definitions into a state's meta namespace,
// owned by "meta". Every type the system serves is registered here first.
import type { State } from '../state/state.ts';
import { upsert } from '../state/upsert.ts';
import {
  DEFINITION_TYPE, fillDefinition, META_NAMESPACE, META_OWNER, NAMESPACE_TYPE,
  type DefinitionInput, type NamespaceSpec, type ResourceDefinitionSpec,
} from './definition.ts';

export async function registerNamespace(state: State, name: string, description: string): Promise<void> {
  await upsert(state, { namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: name }, { description } satisfies NamespaceSpec, META_OWNER);
}

export async function registerType(state: State, d: DefinitionInput): Promise<ResourceDefinitionSpec> {
  const spec = fillDefinition(d);
  await upsert(state, { namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: d.type.toLowerCase() }, spec, META_OWNER);
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
