// registry: puts namespaces and resource definitions into a state's meta namespace,
// owned by "meta" (built in: nobody else may change or delete them). Every type the
// system serves is registered here first, all at once, so aliases are unique.
import type { State } from '../state/state.ts';
import { upsert } from '../state/upsert.ts';
import {
  DEFINITION_TYPE, fillDefinitions, META_NAMESPACE, META_OWNER, NAMESPACE_TYPE,
  type DefinitionInput, type NamespaceSpec, type ResourceDefinitionSpec,
} from './definition.ts';

export async function registerNamespace(state: State, name: string, description: string): Promise<void> {
  await upsert(state, { namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: name },
    { description } satisfies NamespaceSpec, META_OWNER);
}

/** The meta namespace's own two types. */
export const META_TYPES: DefinitionInput[] = [
  {
    type: NAMESPACE_TYPE, defaultNamespace: META_NAMESPACE, aliases: ['ns'], access: 'admin',
    printColumns: [{ name: 'Description', jsonPath: '{.description}' }],
  },
  {
    type: DEFINITION_TYPE, defaultNamespace: META_NAMESPACE, aliases: ['api-resources'], access: 'admin',
    printColumns: [
      { name: 'Aliases', jsonPath: '{.aliases}' }, { name: 'Default Namespace', jsonPath: '{.defaultNamespace}' },
    ],
  },
];

/** Registers the meta namespace and these types (with the meta types); an alias two types share is an error. */
export async function registerTypes(state: State, defs: readonly DefinitionInput[]): Promise<ResourceDefinitionSpec[]> {
  await registerNamespace(state, META_NAMESPACE, 'Metadata: namespaces and resource definitions.');
  const filled = fillDefinitions([...META_TYPES, ...defs]);
  for (const spec of filled) {
    await upsert(state, { namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: spec.type.toLowerCase() }, spec,
      META_OWNER);
  }
  return filled;
}

export async function listDefinitions(state: State): Promise<ResourceDefinitionSpec[]> {
  return (await state.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE }))
    .map((r) => r.spec as ResourceDefinitionSpec);
}
