// explain: a type's fields with their documentation and their rules in words, from the
// machine's resource definitions (the schema each carries, derived from the .proto comments
// for built-in types): kubectl explain's habit, for COSI types.
import { resolveDefinition, type ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import { typeCandidates } from '../completion/complete.ts';
import type { Candidate } from '../completion/contract.ts';
import { FORMAT_WORDS, type SpecSchema } from '../../cosi/meta/schema.ts';
import { noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, EXIT } from '../errors.ts';

export const EXPLAIN_HELP = `usage: cosictl explain TYPE [FIELD[.FIELD...]]
       cosictl explain TYPE.FIELD[.FIELD...]      (kubectl's form: cosictl explain linkspec.mtu)

Documents a resource type: its names, namespace and protobuf message, and each field of its
spec with its type, its rules in words and its documentation. With FIELD, that field (and
the fields inside it): cosictl explain linkspec mtu, cosictl explain routespec gateway.
`;

/** A field's type and rules in words: "string, one line, at most 4096 characters". */
export function schemaWords(s: SpecSchema): string {
  switch (s.type) {
    case 'string': {
      const w = ['string'];
      if (s.enum) w.push(`one of ${s.enum.join(', ')}`);
      if (s.format) w.push(FORMAT_WORDS[s.format]);
      if (s.patternHelp) w.push(s.patternHelp);
      else if (s.pattern) w.push(`matching ${s.pattern}`);
      if (s.minLength === 1) w.push('not empty');
      else if (s.minLength !== undefined) w.push(`at least ${s.minLength} characters`);
      if (s.maxLength !== undefined) w.push(`at most ${s.maxLength} characters`);
      return w.join(', ');
    }
    case 'integer': case 'number': {
      const range = s.minimum !== undefined && s.maximum !== undefined ? `, ${s.minimum} to ${s.maximum}`
        : s.minimum !== undefined ? `, at least ${s.minimum}` : s.maximum !== undefined ? `, at most ${s.maximum}` : '';
      return `${s.type}${range}`;
    }
    case 'array': {
      const n = s.maxItems !== undefined ? `, at most ${s.maxItems} items` : '';
      return `list of (${schemaWords(s.items)})${s.minItems === 1 ? ', not empty' : ''}${n}`;
    }
    case 'object': return s.properties ? 'mapping with the fields below' : 'mapping';
    case 'boolean': return 'true or false';
    default: return 'any value';
  }
}

function fieldLines(s: SpecSchema, indent: string, required: readonly string[] = []): string[] {
  if (s.type === 'array') return fieldLines(s.items, indent);
  if (s.type !== 'object' || !s.properties) return [];
  return Object.entries(s.properties).flatMap(([name, f]) => [
    `${indent}${name} <${schemaWords(f)}>${required.includes(name) ? ' (required)' : ''}`,
    ...(f.description ? f.description.split('\n').map((l) => `${indent}    ${l}`) : []),
    ...fieldLines(f, `${indent}  `, f.type === 'object' ? f.required : []),
  ]);
}

/** Completes FIELD: the fields inside the dotted path typed so far, as the path plus each field's name. */
export function fieldCandidates(schema: SpecSchema | undefined, current: string): Candidate[] {
  const spec = current.startsWith('spec.') ? 'spec.' : '';
  const path = current.slice(spec.length).split('.');
  path.pop();
  let s = schema;
  for (const name of path) {
    while (s?.type === 'array') s = s.items;
    s = s?.type === 'object' ? s.properties?.[name] : undefined;
  }
  while (s?.type === 'array') s = s.items;
  const prefix = spec + path.map((p) => `${p}.`).join('');
  return s?.type === 'object' ? Object.entries(s.properties ?? {})
    .map(([name, f]) => ({ value: `${prefix}${name}`, about: schemaWords(f) })) : [];
}

/** The schema at a dotted path of fields (lists are walked through to their items). */
function fieldAt(schema: SpecSchema, path: string[], def: ResourceDefinitionSpec): SpecSchema {
  let s = schema;
  for (const [i, name] of path.entries()) {
    while (s.type === 'array') s = s.items;
    const next = s.type === 'object' ? s.properties?.[name] : undefined;
    if (!next) {
      const here = path.slice(0, i).join('.') || 'spec';
      const known = s.type === 'object' ? Object.keys(s.properties ?? {}) : [];
      throw new CliError(`${def.displayType}: ${here} has no field "${name}"${known.length
        ? ` (fields: ${known.join(', ')})` : ''}`, EXIT.notFound);
    }
    s = next;
  }
  return s;
}

export const explainCommand: Command = {
  name: 'explain',
  summary: 'explain TYPE [FIELD]   a type\'s fields, their rules and documentation',
  help: EXPLAIN_HELP,
  flags: [],
  async completeArg(line, current, lookups) {
    if (!line.args.length) return { values: await typeCandidates(lookups) };
    if (line.args.length > 1) return { values: [] };
    const def = resolveDefinition(await lookups.definitions(), line.args[0]!);
    return { values: fieldCandidates(def?.schema, current) };
  },
  async run({ p, out, session }) {
    const [given, fieldGiven, ...extra] = p.positional;
    if (!given) throw new CliError('explain: name a resource type (see `cosictl api-resources`)', EXIT.usage);
    noArguments('explain', extra);
    const s = await session();
    const defs = await s.definitions();
    // TYPE.FIELD: a type's full name has dots too (LinkSpecs.net.appliance.dev), so the whole is tried first.
    const dot = given.indexOf('.');
    const split = fieldGiven === undefined && !resolveDefinition(defs, given) && dot > 0
      && resolveDefinition(defs, given.slice(0, dot)) !== undefined;
    const typeName = split ? given.slice(0, dot) : given;
    const field = split ? given.slice(dot + 1) : fieldGiven;
    const def = await s.resolve(typeName);
    const head = [
      `KIND:       ${def.displayType}`, `TYPE:       ${def.type}`, `NAMESPACE:  ${def.defaultNamespace}`,
      `ALIASES:    ${def.aliases.join(', ') || '-'}`,
      ...(def.protoMessage ? [`MESSAGE:    ${def.protoMessage}`] : []),
      ...(def.sensitivity ? ['SENSITIVE:  yes (only admins may read it)'] : []),
    ];
    if (!def.schema) {
      out(`${head.join('\n')}\n\nNo schema: its specs are free-form (the type was registered without one).\n`);
      return EXIT.ok;
    }
    if (field) {
      const path = field.replace(/^spec\./, '').split('.');
      const s = fieldAt(def.schema, path, def);
      out(`${head.join('\n')}\n\nFIELD:      ${path.join('.')} <${schemaWords(s)}>\n`
        + (s.description ? `\n${s.description.split('\n').map((l) => `  ${l}`).join('\n')}\n` : '')
        + (fieldLines(s, '  ').length ? `\nFIELDS:\n${fieldLines(s, '  ', s.type === 'object' ? s.required : [])
          .join('\n')}\n` : ''));
      return EXIT.ok;
    }
    const lines = fieldLines(def.schema, '  ', def.schema.type === 'object' ? def.schema.required : []);
    out(`${head.join('\n')}\n\n${def.schema.description ? `${def.schema.description}\n\n` : ''}`
      + `FIELDS:\n${lines.join('\n') || '  (none)'}\n`);
    return EXIT.ok;
  },
};
