// definition: ResourceDefinitions (meta namespace): how a type is named, where it
// lives by default, its aliases, the columns a table shows, its sensitivity, and
// (our extension) the schema of its spec.
import { StateError } from '../state/errors.ts';
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
  schema?: SpecSchema;
}

/** The spec of a ResourceDefinition, with the YAML keys of the wire format. */
export interface ResourceDefinitionSpec {
  type: string;
  displayType: string;
  defaultNamespace: string;
  aliases: string[];
  allAliases: string[];
  printColumns: PrintColumn[];
  sensitivity?: 'sensitive';
  schema?: SpecSchema;
}

export interface NamespaceSpec { description: string }

/** English singular of a CamelCase plural's last word: Addresses -> Address, Statuses -> Status, Policies -> Policy. */
export function singular(plural: string): string {
  const rules: [RegExp, string][] = [[/uses$/, 'us'], [/sses$/, 'ss'], [/ies$/, 'y'], [/(x|ch|sh)es$/, '$1'], [/s$/, '']];
  for (const [re, to] of rules) if (re.test(plural)) return plural.replace(re, to);
  return plural;
}

/** Validates a type name and fills display type and aliases the way the reference runtime does. */
export function fillDefinition(d: DefinitionInput): ResourceDefinitionSpec {
  const bad = (why: string) => new StateError('invalid-argument', `resource type "${d.type}": ${why}`, d.type);
  const dot = d.type.indexOf('.');
  if (dot < 0) throw bad('missing suffix (expected <PluralName>.<dns.suffix>)');
  const name = d.type.slice(0, dot);
  const suffix = d.type.slice(dot + 1);
  if (!/^[A-Z][A-Za-z0-9-]+$/.test(name)) throw bad('name must be CamelCase letters, digits and dashes');
  if (!/^[a-z][a-z0-9-]+(\.[a-z][a-z0-9-]+)*$/.test(suffix)) throw bad('suffix must be a lowercase DNS name');
  if (!name.endsWith('s')) throw bad('name should be plural');
  const displayType = d.displayType ?? singular(name);
  const aliases = [...(d.aliases ?? []), displayType.toLowerCase()];
  const allAliases = [name.toLowerCase()];
  const parts = suffix.split('.');
  for (let i = 1; i < parts.length; i++) allAliases.push([name.toLowerCase(), ...parts.slice(0, i)].join('.'));
  const upper = name.replace(/[^A-Z]/g, '');
  if (upper.length > 1) {
    aliases.push(upper.toLowerCase());
    if (!upper.endsWith('S')) aliases.push(`${upper.toLowerCase()}s`);
  }
  allAliases.push(...aliases);
  return {
    type: d.type, displayType, defaultNamespace: d.defaultNamespace, aliases, allAliases,
    printColumns: d.printColumns ?? [],
    ...(d.sensitive ? { sensitivity: 'sensitive' as const } : {}),
    ...(d.schema ? { schema: d.schema } : {}),
  };
}

/** Finds the definition whose type, id or any alias equals `name` (case-insensitive). */
export function resolveDefinition(defs: readonly ResourceDefinitionSpec[], name: string): ResourceDefinitionSpec | undefined {
  const n = name.toLowerCase();
  return defs.find((d) => d.type.toLowerCase() === n) ?? defs.find((d) => d.allAliases.includes(n) || d.aliases.includes(n));
}
