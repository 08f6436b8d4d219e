// validation: what the engine accepts from writers. A resource must be of a
// registered type, in a registered namespace, and its spec must satisfy the type's
// schema when it has one. The meta namespace is written by the engine only.
import { DEFINITION_TYPE, META_NAMESPACE, NAMESPACE_TYPE, type ResourceDefinitionSpec } from '../cosi/meta/definition.ts';
import { validateSpec } from '../cosi/meta/schema.ts';
import type { Resource } from '../cosi/resource/resource.ts';
import { OpaqueSpec } from '../cosi/resource/resource.ts';
import type { MemoryState } from '../cosi/state/memory-state.ts';

export function createValidator(state: MemoryState): (r: Resource) => string[] {
  return (r) => {
    const { namespace, type } = r.metadata;
    if (namespace === META_NAMESPACE) return [`the ${META_NAMESPACE} namespace is managed by the engine`];
    let def: ResourceDefinitionSpec;
    try { def = state.getSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() }).spec as ResourceDefinitionSpec; } catch {
      return [`unknown resource type ${type} (see \`cosictl api-resources\`)`];
    }
    try { state.getSync({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: namespace }); } catch {
      return [`unknown namespace "${namespace}" (${def.type} lives in "${def.defaultNamespace}")`];
    }
    if (!def.schema || r.spec instanceof OpaqueSpec) return [];
    return validateSpec(def.schema, r.spec);
  };
}
