// resource-types: the (appliance.v1alpha1.resource) option of each spec message (proto/appliance/v1alpha1/
// options.proto) -> proto/gen/resource-types.ts: a constant per type and per namespace, and every built-in
// type's ResourceDefinition input grouped by who serves it. A type is so written down once, in its .proto; a
// merged twin (Merged<type>) is made here, as the merge controllers expect it.
import protobuf from 'protobufjs';

interface ResourceOption {
  type?: string;
  namespace?: string;
  served_by?: string;
  aliases?: string[];
  columns?: { name?: string; field?: string }[];
  merged?: boolean;
  access?: string;
  sensitive?: boolean;
  ephemeral?: boolean;
  needs_reboot?: boolean;
  display_type?: string;
  former_types?: string[];
}

const OPTION = '(appliance.v1alpha1.resource)';
const ACCESS = ['users', 'admin', 'controllers'];

/** CamelCase -> SCREAMING_SNAKE_CASE (ConfigService -> CONFIG_SERVICE): the generated constants' names. */
export const screamingSnake = (name: string) => name.replace(/(?<=[a-z0-9])(?=[A-Z])/g, '_').toUpperCase();
/** A message's type constant without its _TYPE: LinkStatusSpec -> LINK_STATUS. */
const typeName = (t: protobuf.Type) => screamingSnake(t.name.replace(/Spec$/, ''));

function optionOf(t: protobuf.Type): ResourceOption | undefined {
  const parsed = (t.parsedOptions ?? []) as Record<string, unknown>[];
  const found = parsed.find((o) => OPTION in o) as Record<string, ResourceOption> | undefined;
  return found?.[OPTION];
}

interface Entry { message: protobuf.Type; option: Required<Pick<ResourceOption, 'type' | 'namespace' | 'served_by'>>
  & ResourceOption }

/** Every spec message with the option, checked: a missing or wrong field fails the build naming the message. */
function entries(root: protobuf.Namespace): Entry[] {
  const out: Entry[] = [];
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const o of ns.nestedArray) {
      if (o instanceof protobuf.Type) {
        const option = optionOf(o);
        if (option) out.push({ message: o, option: checked(o, option) });
      }
      if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) walk(o);
    }
  };
  walk(root);
  const seen = new Map<string, string>();
  for (const e of out) {
    const merged = e.option.merged ? [`Merged${e.option.type}`] : [];
    const names = [e.option.type, ...merged, ...e.option.former_types ?? []];
    for (const type of names) {
      const before = seen.get(type);
      if (before) throw new Error(`gen-proto: ${e.message.fullName} and ${before} both define ${type}`);
      seen.set(type, e.message.fullName);
    }
  }
  return out;
}

/** protobufjs gives a repeated field set once as its one value, not a list of one. */
const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function checked(t: protobuf.Type, raw: ResourceOption): Entry['option'] {
  const o = { ...raw, aliases: list(raw.aliases), columns: list(raw.columns), former_types: list(raw.former_types) };
  const where = `gen-proto: ${t.fullName.slice(1)}: its ${OPTION} option`;
  if (!o.type || !/^[A-Z]\w*\.[a-z][\w.-]*$/.test(o.type)) {
    throw new Error(`${where} needs a type like Things.group.dev`);
  }
  if (!o.namespace) throw new Error(`${where} names no namespace`);
  if (!o.served_by) throw new Error(`${where} names no served_by (engine, or a plugin)`);
  if (o.access && !ACCESS.includes(o.access)) throw new Error(`${where}: access "${o.access}" is none of ${ACCESS}`);
  for (const c of o.columns) {
    if (!c.name || !c.field) throw new Error(`${where}: a column needs a name and a field`);
  }
  return { ...o, type: o.type, namespace: o.namespace, served_by: o.served_by };
}

const str = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The text of proto/gen/resource-types.ts. */
export function resourceTypes(root: protobuf.Namespace, header: string, fileOf: (t: protobuf.Type) => string): string {
  const all = entries(root);
  const namespaces = [...new Set(all.map((e) => e.option.namespace))].sort();
  const nsConst = (ns: string) => `${screamingSnake(ns.replace(/[^a-z0-9]+/gi, '_'))}_NS`;
  let out = header
    + '// Data only: proto/ imports nothing. A Definition has the shape of DefinitionInput '
    + '(cosi/meta/definition.ts).\n\n';
  for (const ns of namespaces) out += `export const ${nsConst(ns)} = ${str(ns)};\n`;
  out += '\n';
  for (const e of all) {
    const name = typeName(e.message);
    out += `/** ${e.message.name}'s type (${fileOf(e.message)}). */\n`;
    out += `export const ${name}_TYPE = ${str(e.option.type)};\n`;
    if (e.option.merged) out += `export const MERGED_${name}_TYPE = ${str(`Merged${e.option.type}`)};\n`;
  }
  out += `
export interface Definition {
  type: string;
  defaultNamespace: string;
  protoMessage: string;
  displayType?: string;
  aliases?: string[];
  printColumns?: { name: string; jsonPath: string }[];
  sensitive?: boolean;
  ephemeral?: boolean;
  needsReboot?: boolean;
  access?: 'users' | 'admin' | 'controllers';
  formerTypes?: string[];
}

/** Every built-in type's definition, by who serves it: "engine" or a built-in plugin's name. */
export const DEFINITIONS_BY_SERVER: Readonly<Record<string, readonly Definition[]>> = {
`;
  const servers = [...new Set(all.map((e) => e.option.served_by))];
  for (const server of servers) {
    out += `  ${str(server)}: [\n`;
    for (const e of all.filter((x) => x.option.served_by === server)) {
      const o = e.option;
      const name = typeName(e.message);
      const columns = (o.columns ?? []).map((c) => `{ name: ${str(c.name!)}, jsonPath: ${str(`{.${c.field}}`)} }`);
      const base = [`defaultNamespace: ${nsConst(o.namespace)}`, `protoMessage: ${str(e.message.fullName.slice(1))}`,
        ...(columns.length ? [`printColumns: [${columns.join(', ')}]`] : [])];
      const fields = [`type: ${name}_TYPE`, ...base.slice(0, 2),
        ...(o.display_type ? [`displayType: ${str(o.display_type)}`] : []),
        ...(o.aliases?.length ? [`aliases: [${o.aliases.map(str).join(', ')}]`] : []),
        ...base.slice(2),
        ...(o.sensitive ? ['sensitive: true'] : []),
        ...(o.ephemeral ? ['ephemeral: true'] : []),
        ...(o.needs_reboot ? ['needsReboot: true'] : []),
        ...(o.access ? [`access: ${str(o.access)}`] : []),
        ...(o.former_types?.length ? [`formerTypes: [${o.former_types.map(str).join(', ')}]`] : [])];
      out += `    { ${fields.join(', ')} },\n`;
      if (o.merged) {
        // As the merge controllers have always made it: columns always listed, no aliases, no access of its own.
        const twin = [`type: MERGED_${name}_TYPE`, ...base.slice(0, 2), `printColumns: [${columns.join(', ')}]`,
          ...(o.sensitive ? ['sensitive: true'] : [])];
        out += `    { ${twin.join(', ')} },\n`;
      }
    }
    out += '  ],\n';
  }
  return `${out}};\n`;
}
