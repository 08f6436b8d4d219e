// definition: ResourceDefinitions (meta namespace): how a type is named, where it
// lives by default, its aliases, the columns a table shows, its sensitivity, and (our
// extension, YAML only) the protobuf message of its spec, a descriptor for a message
// the machine does not know, or a schema for a type without a message.
import { StateError } from '../state/errors.ts';
import type { Pointer } from '../resource/resource.ts';
import type { SpecSchema } from './schema.ts';

export const META_NAMESPACE = 'meta';
export const META_OWNER = 'meta';
export const NAMESPACE_TYPE = 'Namespaces.meta.cosi.dev';
export const DEFINITION_TYPE = 'ResourceDefinitions.meta.cosi.dev';

export interface PrintColumn { name: string; jsonPath: string }

export interface DefinitionInput {
  type: string;
  defaultNamespace: string;
  displayType?: string;
  aliases?: string[];
  printColumns?: PrintColumn[];
  sensitive?: boolean;
  /** The full name of the spec's protobuf message (e.g. appliance.net.v1alpha1.AddressSpecSpec). */
  protoMessage?: string;
  /**
   * A serialized google.protobuf.FileDescriptorSet holding protoMessage, base64 (a message the machine
   * does not know).
   */
  protoDescriptor?: string;
  /** For a type without a message: the schema its specs must satisfy. */
  schema?: SpecSchema;
  /** Requests acted on once (PowerRequest): users create them, but they are no part of the machine config. */
  ephemeral?: boolean;
  /** Changes to resources of this type take effect at the next boot, not at once. */
  needsReboot?: boolean;
  /** Who writes resources of this type (default users). */
  access?: TypeAccess;
  /** The full names the type had before a rename: served as this type for a while. */
  formerTypes?: string[];
}

/**
 * Who writes resources of a type: users (declarations and requests: admins and operators),
 * admin (admins only: the machine's trust, limits, types), or controllers (statuses:
 * only the controller or engine that owns them; users only read them).
 */
export type TypeAccess = 'users' | 'admin' | 'controllers';

/** The spec of a ResourceDefinition, with the YAML keys of the wire format. */
export interface ResourceDefinitionSpec {
  type: string;
  displayType: string;
  defaultNamespace: string;
  aliases: string[];
  allAliases: string[];
  printColumns: PrintColumn[];
  sensitivity?: 'sensitive';
  protoMessage?: string;
  protoDescriptor?: string;
  /** The schema specs are validated against: the type's own, or derived from its message. */
  schema?: SpecSchema;
  ephemeral?: boolean;
  needsReboot?: boolean;
  /** Absent: users. */
  access?: 'admin' | 'controllers';
  /** Names the type had before a rename: a request naming one is served as this type. */
  formerTypes?: string[];
}

/** Our extension of a definition: no field in the upstream message, so it travels in the YAML only. */
export const EXTENSION_KEYS = [
  'protoMessage', 'protoDescriptor', 'schema', 'ephemeral', 'needsReboot', 'access', 'formerTypes',
] as const satisfies readonly (keyof ResourceDefinitionSpec)[];

export interface NamespaceSpec { description: string }

/** English singular of a CamelCase plural's last word: Addresses -> Address, Statuses -> Status, Policies -> Policy. */
export function singular(plural: string): string {
  const rules: [RegExp, string][] = [
    [/uses$/, 'us'], [/sses$/, 'ss'], [/ies$/, 'y'], [/(x|ch|sh)es$/, '$1'], [/s$/, ''],
  ];
  for (const [re, to] of rules) if (re.test(plural)) return plural.replace(re, to);
  return plural;
}

/** Why a type name is not <PluralCamelCase>.<dns.suffix>, or undefined when it is. */
export function typeNameProblem(type: string): string | undefined {
  const dot = type.indexOf('.');
  if (dot < 0) return 'missing suffix (expected <PluralName>.<dns.suffix>, e.g. Widgets.example.com)';
  const name = type.slice(0, dot);
  const suffix = type.slice(dot + 1);
  if (!/^[A-Z][A-Za-z0-9-]+$/.test(name)) {
    return 'the name must be CamelCase letters, digits and dashes, starting with a capital';
  }
  if (!/^[a-z][a-z0-9-]+(\.[a-z][a-z0-9-]+)*$/.test(suffix)) return 'the suffix must be a lowercase DNS name';
  if (!name.endsWith('s')) return 'the name should be plural (Widgets, not Widget)';
  if (type.length > 253) return 'longer than 253 characters';
  return undefined;
}

/** The capitals of a type's name as an alias ("as" for AddressSpecs); dropped where it would be ambiguous. */
export function initialsAlias(type: string): string | undefined {
  const upper = type.slice(0, type.indexOf('.')).replace(/[^A-Z]/g, '');
  return upper.length > 1 ? upper.toLowerCase() : undefined;
}

/**
 * Validates a type name and fills display type and aliases the way the reference
 * runtime does: the given aliases, the lowercase display type, and the capitals'
 * initials unless `initials` is false (they are skipped where another type has them).
 */
export function fillDefinition(d: DefinitionInput, o: { initials?: boolean } = {}): ResourceDefinitionSpec {
  const problem = typeNameProblem(d.type);
  if (problem) throw new StateError('invalid-argument', `resource type "${d.type}": ${problem}`, d.type);
  const name = d.type.slice(0, d.type.indexOf('.'));
  const suffix = d.type.slice(d.type.indexOf('.') + 1);
  const displayType = d.displayType || singular(name);
  const aliases = [...new Set((d.aliases ?? []).map((a) => a.toLowerCase()))];
  const add = (a: string | undefined) => {
    if (a && !aliases.includes(a)) aliases.push(a);
  };
  add(displayType.toLowerCase());
  if (o.initials !== false) add(initialsAlias(d.type));
  const allAliases = [name.toLowerCase()];
  const parts = suffix.split('.');
  for (let i = 1; i < parts.length; i++) allAliases.push([name.toLowerCase(), ...parts.slice(0, i)].join('.'));
  // A renamed type answers to what users typed for its former name: the full name, the plural, the singular.
  for (const former of d.formerTypes ?? []) {
    const formerName = former.slice(0, former.indexOf('.'));
    for (const a of [former.toLowerCase(), formerName.toLowerCase(), singular(formerName).toLowerCase()]) add(a);
  }
  for (const a of aliases) if (!allAliases.includes(a)) allAliases.push(a);
  return {
    type: d.type, displayType, defaultNamespace: d.defaultNamespace, aliases, allAliases,
    printColumns: d.printColumns ?? [],
    ...(d.sensitive ? { sensitivity: 'sensitive' as const } : {}),
    ...(d.protoMessage ? { protoMessage: d.protoMessage } : {}),
    ...(d.protoDescriptor ? { protoDescriptor: d.protoDescriptor } : {}),
    ...(d.schema ? { schema: d.schema } : {}),
    ...(d.ephemeral ? { ephemeral: true } : {}),
    ...(d.needsReboot ? { needsReboot: true } : {}),
    ...(d.access && d.access !== 'users' ? { access: d.access } : {}),
    ...(d.formerTypes?.length ? { formerTypes: [...d.formerTypes] } : {}),
  };
}

/** The names a user may type for a definition: its type, lowercased, and every alias. */
export function namesOf(d: ResourceDefinitionSpec): string[] {
  return [d.type.toLowerCase(), ...d.allAliases, ...d.aliases];
}

/**
 * Definitions whose type or an alias equals `name` (case-insensitive): one, none, or (never, aliases
 * are unique) several.
 */
export function matchDefinitions(defs: readonly ResourceDefinitionSpec[], name: string): ResourceDefinitionSpec[] {
  const n = name.toLowerCase();
  const exact = defs.filter((d) => d.type.toLowerCase() === n);
  return exact.length ? exact : defs.filter((d) => d.allAliases.includes(n) || d.aliases.includes(n));
}

/**
 * A resource as users name it (the machine config's change lists, cosictl diff): `type/id` by the
 * type's display name, with the namespace in front when it is not the type's default one.
 */
export function resourceName(p: Pointer, def: ResourceDefinitionSpec | undefined): string {
  const short = `${(def?.displayType ?? p.type).toLowerCase()}/${p.id}`;
  return def && def.defaultNamespace === p.namespace ? short : `${p.namespace}/${short}`;
}

/** The one definition `name` names, or undefined. Throws when several match, naming them. */
export function resolveDefinition(
  defs: readonly ResourceDefinitionSpec[], name: string,
): ResourceDefinitionSpec | undefined {
  const found = matchDefinitions(defs, name);
  if (found.length > 1) {
    throw new StateError('invalid-argument',
      `"${name}" names several types: ${found.map((d) => d.type).join(', ')}; use the full type name`, name);
  }
  return found[0];
}

/**
 * Fills several definitions at once. An initials alias two of them would share, or
 * that another name already has, is given to none; any other shared name is an error.
 */
export function fillDefinitions(
  inputs: readonly DefinitionInput[], existing: readonly ResourceDefinitionSpec[] = [],
): ResourceDefinitionSpec[] {
  const initials = new Map<string, number>();
  for (const d of inputs) {
    const i = initialsAlias(d.type);
    if (i) initials.set(i, (initials.get(i) ?? 0) + 1);
  }
  const filled = inputs.map((d) => fillDefinition(d, { initials: false }));
  const taken = new Map<string, string>();
  for (const d of [...existing, ...filled]) {
    for (const n of new Set(namesOf(d))) {
      const other = taken.get(n);
      if (other && other !== d.type) {
        throw new StateError('invalid-argument', `alias "${n}" of ${d.type} is already a name of ${other}`, n);
      }
      taken.set(n, d.type);
    }
  }
  return filled.map((d) => {
    const i = initialsAlias(d.type);
    if (!i || initials.get(i)! > 1 || taken.has(i)) return d;
    taken.set(i, d.type);
    return { ...d, aliases: [...d.aliases, i], allAliases: [...d.allAliases, i] };
  });
}
