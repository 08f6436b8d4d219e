// admission: what the engine accepts from writers beyond a valid spec (the codecs check
// specs). A resource must be of a defined type, in an existing namespace. In the meta
// namespace a client may create namespaces and define types of its own (the type's
// default namespace is created with it; its aliases must be unique; a message it names
// must be one the engine can use); built-in namespaces and definitions (owner "meta")
// cannot be changed or deleted, and a definition or namespace that still holds
// resources cannot be deleted.
import {
  DEFINITION_TYPE, initialsAlias, META_NAMESPACE, META_OWNER, namesOf, NAMESPACE_TYPE, type ResourceDefinitionSpec,
} from '../../cosi/meta/definition.ts';
import { codecForDefinition } from '../../cosi/remote/definition-codecs.ts';
import { NAMESPACE_PATTERN } from '../../cosi/remote/meta-codecs.ts';
import { newResource, type Pointer, type Resource } from '../../cosi/resource/resource.ts';
import { StateError } from '../../cosi/state/errors.ts';
import type { MemoryState } from '../../cosi/state/memory-state.ts';
import { specMessages } from '../model/spec-codecs.ts';
import { validateSpec } from '../../cosi/meta/schema.ts';

export interface Admission {
  /**
   * A Create or Update as it will be stored (a new definition gets its schema and initials);
   * throws invalid-argument or permission-denied.
   */
  admit(r: Resource, op: 'create' | 'update'): Resource;
  /** admit without its side effects (a new type's namespace is not created): a config checked before it applies. */
  check(r: Resource, op: 'create' | 'update'): Resource;
  /** A Destroy or Teardown; throws when the resource must stay. */
  admitRemoval(p: Pointer): void;
}

const refuse = (what: string, why: string) => new StateError('invalid-argument', `${what}: ${why}`, what);
const denied = (what: string, why: string) => new StateError('permission-denied', `${what}: ${why}`, what);

export function createAdmission(state: MemoryState): Admission {
  const definitions = () => state.listSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE })
    .map((r) => r.spec as ResourceDefinitionSpec);
  const builtIn = (p: Pointer) => state.findSync(p)?.metadata.owner === META_OWNER;
  const namespaceExists = (name: string) =>
    state.findSync({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: name }) !== undefined;

  function admitDefinition(r: Resource<ResourceDefinitionSpec>, op: 'create' | 'update', effects: boolean): Resource {
    const d = r.spec;
    const what = `ResourceDefinition "${r.metadata.id}"`;
    if (r.metadata.id !== d.type.toLowerCase()) {
      throw refuse(what, `the id must be the type in lowercase ("${d.type.toLowerCase()}")`);
    }
    if (op === 'update' && builtIn(r.metadata)) throw denied(what, 'a built-in type cannot be changed');
    let spec: ResourceDefinitionSpec = d;
    if (d.protoMessage) {
      // The schema of a type with a message is always the message's.
      const codec = codecForDefinition(d, specMessages());
      spec = { ...spec, ...(codec.schema ? { schema: codec.schema } : {}) };
    }
    // Aliases are unique across all types; the capitals' initials are added only where nobody has them.
    const initials = initialsAlias(d.type);
    const own = {
      ...spec,
      aliases: spec.aliases.filter((a) => a !== initials),
      allAliases: spec.allAliases.filter((a) => a !== initials),
    };
    const taken = new Map(definitions().filter((x) => x.type !== d.type)
      .flatMap((x) => namesOf(x).map((n) => [n, x.type] as const)));
    for (const n of namesOf(own)) {
      const other = taken.get(n);
      if (other) throw refuse(what, `the name "${n}" is already ${other}'s; choose other aliases`);
    }
    spec = initials && !taken.has(initials)
      ? { ...own, aliases: [...own.aliases, initials], allAliases: [...own.allAliases, initials] }
      : own;
    if (effects && op === 'create' && !namespaceExists(spec.defaultNamespace)) {
      // Created with the type so that its first resource can follow at once; state writes are synchronous.
      void state.create(newResource(
        { namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: spec.defaultNamespace },
        { description: `Created for ${d.type}.` },
      ));
    }
    return { ...r, spec };
  }

  function admit(r: Resource, op: 'create' | 'update', effects: boolean): Resource {
    const { namespace, type, id } = r.metadata;
    if (namespace === META_NAMESPACE) {
      if (type === DEFINITION_TYPE) return admitDefinition(r as Resource<ResourceDefinitionSpec>, op, effects);
      if (type === NAMESPACE_TYPE) {
        if (!new RegExp(NAMESPACE_PATTERN).test(id)) {
          throw refuse(`namespace "${id}"`, 'the name must be a DNS label (lowercase letters, digits, dashes)');
        }
        if (op === 'update' && builtIn(r.metadata)) {
          throw denied(`namespace "${id}"`, 'a built-in namespace cannot be changed');
        }
        return r;
      }
      throw denied(`${type} "${id}"`,
        `the ${META_NAMESPACE} namespace holds only namespaces and resource definitions`);
    }
    const def = state.findSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() })
      ?.spec as ResourceDefinitionSpec | undefined;
    if (!def) throw refuse(`${type} "${id}"`, `unknown resource type ${type} (see \`cosictl api-resources\`)`);
    if (!namespaceExists(namespace)) {
      throw refuse(`${type} "${id}"`,
        `unknown namespace "${namespace}" (${def.type} lives in "${def.defaultNamespace}")`);
    }
    const idProblems = idStandsInFor(def, r.spec, id);
    if (idProblems.length) throw refuse(`${type} "${id}"`, idProblems.join('; '));
    return r;
  }

  /**
   * Where the id stands in for a field the spec leaves unset (a KernelParamSpec's key), the field's rules, applied
   * to the id: `kernel/../../etc/x` is refused when written, not when the plugin comes to write it.
   */
  function idStandsInFor(def: ResourceDefinitionSpec, spec: unknown, id: string): string[] {
    const field = def.protoMessage ? specMessages().messages.get(def.protoMessage)?.idField : undefined;
    if (!field || (spec as Record<string, unknown> | null)?.[field] !== undefined) return [];
    const rules = def.schema?.type === 'object' ? def.schema.properties?.[field] : undefined;
    return rules ? validateSpec(rules, id, `metadata.id (the ${field} when spec.${field} is unset)`) : [];
  }

  return {
    admit: (r, op) => admit(r, op, true),
    check: (r, op) => admit(r, op, false),
    admitRemoval(p) {
      if (p.namespace !== META_NAMESPACE) return;
      const cur = state.findSync(p);
      if (!cur) return; // the state answers not-found
      if (cur.metadata.owner === META_OWNER) {
        throw denied(`${p.type === NAMESPACE_TYPE ? 'namespace' : 'ResourceDefinition'} "${p.id}"`,
          'built in: it cannot be deleted');
      }
      if (p.type === DEFINITION_TYPE) {
        const type = (cur.spec as ResourceDefinitionSpec).type;
        const n = state.count({ type });
        if (n) {
          throw new StateError('in-use',
            `ResourceDefinition "${p.id}": ${n} ${type} resource(s) still exist; delete them first`, p.id);
        }
      }
      if (p.type === NAMESPACE_TYPE) {
        const n = state.count({ namespace: p.id });
        if (n) {
          throw new StateError('in-use',
            `namespace "${p.id}": still holds ${n} resource(s); delete them first`, p.id);
        }
      }
    },
  };
}
