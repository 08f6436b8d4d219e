// gen-docs: docs/resources.md from what the program itself knows: the resource
// definitions (engine and plugins), the protobuf messages with their comments and
// rules (proto/appliance), and the controllers' inputs and outputs (who writes and
// who reads each type). Examples come from the messages' "Example:" comments and are
// checked against the type's schema by scripts/gen-docs.test.ts. Also docs/security.md
// (scripts/lib/security-doc.ts), proto/gen/builtin-types.ts and the editors' JSON Schemas in docs/schemas
// (image/appliance/editor-schemas.ts).
//   --check   exit 1 if any of them is not up to date
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { fillDefinitions, type DefinitionInput, type ResourceDefinitionSpec } from '../cosi/meta/definition.ts';
import { META_TYPES } from '../cosi/meta/registry.ts';
import type { SpecSchema } from '../cosi/meta/schema.ts';
import { ENGINE_TYPES, NAMESPACES } from '../machinery/model/runtime-types.ts';
import { everyController, servedTypes } from '../machinery/model/plugin.ts';
import { specMessages, withSchemas } from '../machinery/model/spec-codecs.ts';
import { PLUGINS } from '../plugins/index.ts';
import { ROOT } from './lib/paths.ts';
import { generateSecurityDoc } from './lib/security-doc.ts';
import { editorSchemas } from '../image/appliance/editor-schemas.ts';

export const RESOURCES_MD = join(ROOT, 'docs', 'resources.md');
export const SECURITY_MD = join(ROOT, 'docs', 'security.md');

/** A message comment split into its description and its example (the lines after "Example:"). */
export function splitComment(comment: string | null | undefined): { text: string; example?: string } {
  if (!comment) return { text: '' };
  const at = comment.search(/(^|\n)Example:/);
  if (at < 0) return { text: comment.trim() };
  return { text: comment.slice(0, at).trim(), example: comment.slice(at).replace(/^\n?Example:\n?/, '').trim() + '\n' };
}

/** "VersionSpec: what is running." -> "What is running." (the message's name is the heading already). */
const sentence = (text: string) => text.replace(/^\w+: /, '').replace(/^./, (c) => c.toUpperCase()).replace(/\n/g, ' ');

function typeWords(s: SpecSchema): string {
  switch (s.type) {
    case 'string': {
      if (s.enum) return `one of ${s.enum.map((v) => `\`${v}\``).join(', ')}`;
      const parts = ['string'];
      if (s.format) parts.push(s.format === 'timestamp' ? '(RFC 3339 time)' : `(${s.format})`);
      if (s.patternHelp) parts.push(`(${s.patternHelp})`);
      if (s.maxLength !== undefined) parts.push(`(at most ${s.maxLength} characters)`);
      return parts.join(' ');
    }
    case 'integer':
      return s.minimum !== undefined && s.maximum !== undefined ? `integer ${s.minimum}..${s.maximum}` : 'integer';
    case 'number': return 'number';
    case 'boolean': return 'boolean';
    case 'array':
      return `list of ${typeWords(s.items)}${s.maxItems !== undefined ? ` (at most ${s.maxItems})` : ''}`;
    case 'object':
      return s.properties ? 'object' : `map of string to ${typeWords(s.additionalProperties as SpecSchema)}`;
    default: return 'any';
  }
}

/** Rows of the field table, nested objects flattened with dotted names. */
function fieldRows(s: SpecSchema, prefix = ''): string[] {
  if (s.type !== 'object' || !s.properties) return [];
  return Object.entries(s.properties).flatMap(([name, p]) => {
    const path = `${prefix}${name}`;
    const required = s.required?.includes(name) ? ' (required)' : '';
    const desc = sentence(splitComment(p.description).text).replace(/\|/g, '\\|');
    const sub = p.type === 'array' && p.items.type === 'object'
      ? fieldRows(p.items, `${path}[].`) : fieldRows(p, `${path}.`);
    return [`| \`${path}\` | ${typeWords(p)}${required} | ${desc} |`, ...sub];
  });
}

interface Roles { writers: string[]; readers: string[]; controllerOwned: boolean }

function roles(defs: readonly ResourceDefinitionSpec[]): Map<string, Roles> {
  const out = new Map<string, Roles>(defs.map((d) => [d.type, {
    writers: [], readers: [], controllerOwned: d.access === 'controllers',
  }]));
  for (const d of ENGINE_TYPES) if (out.get(d.type)?.controllerOwned) out.get(d.type)!.writers.push('the engine');
  for (const p of PLUGINS) {
    for (const c of everyController(p)) {
      for (const o of c.outputs()) {
        out.get(o.type)?.writers.push(`${p.name}/${c.name}${o.kind === 'shared' ? ' (shared)' : ''}`);
      }
      for (const i of c.inputs()) out.get(i.type)?.readers.push(
        `${p.name}/${c.name}${i.kind === 'weak' ? '' : ` (${i.kind})`}`,
      );
    }
  }
  for (const d of defs) {
    const r = out.get(d.type)!;
    if (!r.controllerOwned) {
      r.writers.unshift(d.access === 'admin' ? 'admins (cosictl apply, the machine config)'
        : 'users: admins and operators (cosictl apply, the machine config)');
    }
  }
  return out;
}

function section(d: ResourceDefinitionSpec, r: Roles | undefined): string {
  const message = d.protoMessage ? specMessages().messages.get(d.protoMessage) : undefined;
  const { text, example } = splitComment(message?.comment);
  const lines = [
    `### ${d.displayType}`, '',
    `\`${d.type}\` · namespace \`${d.defaultNamespace}\` · names: ${d.aliases.map((a) => `\`${a}\``).join(', ')}`
      + `${d.protoMessage ? ` · message \`${d.protoMessage}\`` : ''}`
      + `${d.sensitivity ? ' · sensitive (admins read it)' : ''}`,
    '',
  ];
  if (text) lines.push(sentence(text), '');
  if (r) {
    lines.push(`- written by: ${r.writers.length ? [...new Set(r.writers)].join(', ') : 'nobody yet'}`);
    lines.push(`- read by: ${r.readers.length ? [...new Set(r.readers)].join(', ') : 'clients'}`, '');
  }
  const rows = d.schema ? fieldRows(d.schema) : [];
  if (rows.length) lines.push('| field | type | description |', '|---|---|---|', ...rows, '');
  if (example && !r?.controllerOwned) {
    const doc = { metadata: { type: d.aliases[0] ?? d.type, id: 'example' }, spec: YAML.parse(example) as unknown };
    lines.push('```yaml', YAML.stringify(doc, { flowCollectionPadding: false }).trimEnd(), '```', '');
  }
  return lines.join('\n');
}

/** Every built-in definition, as the engine registers it, in registration order. */
export function builtinDefinitions(): ResourceDefinitionSpec[] {
  return fillDefinitions([...META_TYPES, ...withSchemas(servedTypes(PLUGINS))]);
}

export function generate(): string {
  const defs = builtinDefinitions();
  const byType = new Map(defs.map((d) => [d.type, d]));
  const who = roles(defs);
  const groups: [string, DefinitionInput[]][] = [
    ['The engine', ENGINE_TYPES],
    ...PLUGINS.map((p): [string, DefinitionInput[]] => [
      `Plugin \`${p.name}\`${p.testOnly ? ' (tests only)' : ''}: ${p.description}`, p.types(),
    ]),
  ];
  const out = [
    '# Resources',
    '',
    '<!-- Generated by scripts/gen-docs.ts from proto/appliance, the resource definitions and the',
    '     controllers. Do not edit: run `npm run gen:docs`. -->',
    '',
    'Every setting of the machine is a resource. Specs are protobuf messages (proto/appliance,',
    'one package per group) and travel as both `proto_spec` and `yaml_spec`; the YAML keys are',
    'the messages\' lowerCamelCase field names, enums their short lowercase names. Declared specs',
    '(`...Spec`) carry a `layer`: default < cmdline < platform < dhcp < config (unset = config); the',
    '`<thing>-merge` controllers pick one `Merged...Spec` per id, which the `<thing>-spec`',
    'controllers apply and report in a status. `cosictl get TYPE` takes any of the names shown.',
    '',
    '## The meta namespace',
    '',
    '`Namespaces.meta.cosi.dev` (`ns`) and `ResourceDefinitions.meta.cosi.dev` (`api-resources`). A client',
    'may create namespaces and define types of its own (a definition with `protoMessage` and',
    '`protoDescriptor`, or with a `schema`, or with neither for free-form specs); built-in ones cannot',
    'be changed or deleted, and a definition or namespace still holding resources cannot be deleted.',
    '',
  ];
  for (const [title, types] of groups) {
    if (!types.length) continue;
    out.push(`## ${title}`, '');
    for (const d of types) out.push(section(byType.get(d.type)!, who.get(d.type)));
  }
  return `${out.join('\n').trimEnd()}\n`;
}

export const BUILTIN_TYPES_TS = join(ROOT, 'proto', 'gen', 'builtin-types.ts');

/**
 * The types and namespaces a machine of this build serves (test-only plugins aside), as data: `cosictl validate`
 * checks a config offline against them, without the plugins' code.
 */
export function generateBuiltinTypes(): string {
  const plugins = PLUGINS.filter((p) => !p.testOnly);
  const types = servedTypes(plugins);
  const namespaces = Object.assign({}, NAMESPACES, ...plugins.map((p) => p.namespaces?.() ?? {})) as object;
  return '// Generated by scripts/gen-docs.ts from the engine\'s and the plugins\' definitions. Do not edit.\n'
    + '// The DefinitionInput of every built-in type (cosi/meta/definition.ts) and the namespaces.\n'
    + `export const BUILTIN_TYPES = ${JSON.stringify(types, null, 2)};\n\n`
    + `export const BUILTIN_NAMESPACES: Record<string, string> = ${JSON.stringify(namespaces, null, 2)};\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outputs: [string, string][] = [
    [RESOURCES_MD, generate()], [BUILTIN_TYPES_TS, generateBuiltinTypes()],
    [SECURITY_MD, generateSecurityDoc(builtinDefinitions())], ...editorSchemas(),
  ];
  for (const [path, text] of outputs) {
    if (process.argv.includes('--check')) {
      if (readFileSync(path, 'utf8') !== text) {
        process.stderr.write(`${path} is stale: run \`npm run gen:proto\`\n`);
        process.exit(1);
      }
    } else {
      writeFileSync(path, text);
      process.stderr.write(`[docs] wrote ${path}\n`);
    }
  }
}
