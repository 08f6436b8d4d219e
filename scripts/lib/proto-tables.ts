// proto-tables: protobufjs reflection -> message tables (cosi/spec/message-info.ts), at
// build time: scripts/gen-proto.ts parses proto/ with protobufjs and writes the tables that
// the program carries (proto/gen/spec-messages.ts); a user's FileDescriptorSet is read at
// run time by cosi/spec/descriptor-set.ts instead.
import protobuf from 'protobufjs';
import type { StringFormat } from '../../cosi/meta/schema.ts';
import {
  jsonName, TIMESTAMP, type EnumInfo, type FieldInfo, type FieldRules, type MessageInfo, type ScalarKind,
} from '../../cosi/spec/message-info.ts';

const RULE = '(appliance.v1alpha1.rules).';

/** The (appliance.v1alpha1.rules) of a field, from protobufjs's flattened option names. */
function rulesOf(f: protobuf.Field): FieldRules | undefined {
  const o = f.options ?? {};
  const get = (...names: string[]) => names.map((n) => o[`${RULE}${n}`]).find((v) => v !== undefined) as never;
  const r: FieldRules = {};
  const set = <K extends keyof FieldRules>(k: K, v: FieldRules[K] | undefined) => {
    if (v !== undefined) r[k] = v;
  };
  set('required', get('required'));
  set('pattern', get('pattern'));
  set('patternHelp', get('pattern_help', 'patternHelp'));
  set('format', get('format') as StringFormat | undefined);
  set('minimum', get('minimum'));
  set('maximum', get('maximum'));
  set('maxItems', get('max_items', 'maxItems'));
  set('maxLength', get('max_length', 'maxLength'));
  return Object.keys(r).length ? r : undefined;
}

const name = (o: protobuf.ReflectionObject) => o.fullName.replace(/^\./, '');

/** How a set's object form differs from the specs' (lowerCamelCase keys, enum values by name). */
export interface TableOptions {
  /** Keys as the .proto names its fields (snake_case), and enum fields as their numbers (int32 on the wire). */
  protoForm?: boolean;
}

function fieldOf(f: protobuf.Field, o: TableOptions): FieldInfo {
  f.resolve();
  const t = f.resolvedType;
  const key = o.protoForm ? f.name : jsonName(f.name);
  const base: FieldInfo = { name: f.name, key, number: f.id, kind: f.type as ScalarKind };
  if (t instanceof protobuf.Enum) {
    Object.assign(base, o.protoForm ? { kind: 'int32' } : { kind: 'enum', type: name(t) });
  }
  if (t instanceof protobuf.Type) Object.assign(base, {
    kind: 'message', type: name(t) === TIMESTAMP ? TIMESTAMP : name(t),
  });
  if (f.map) base.mapKey = (f as unknown as protobuf.MapField).keyType as ScalarKind;
  else if (f.repeated) base.repeated = true;
  // proto3 `optional`
  else if (!(t instanceof protobuf.Type) && f.partOf && /^_/.test(f.partOf.name)) base.optional = true;
  if (f.comment) base.comment = f.comment;
  const rules = rulesOf(f);
  if (rules) base.rules = rules;
  return base;
}

/** The (appliance.v1alpha1.id_field) of a message: a field of its own, or the build fails naming it. */
function idFieldOf(t: protobuf.Type): { idField?: string } {
  const field = t.options?.['(appliance.v1alpha1.id_field)'] as string | undefined;
  if (field === undefined) return {};
  if (!t.fields[field]) throw new Error(`${name(t)}: id_field names "${field}", which is not one of its fields`);
  return { idField: jsonName(field) };
}

/** Every message and enum under `ns` (recursively), as tables. */
export function tablesFromProtobufjs(
  ns: protobuf.NamespaceBase, opts: TableOptions = {},
): { messages: MessageInfo[]; enums: EnumInfo[] } {
  const messages: MessageInfo[] = [];
  const enums: EnumInfo[] = [];
  const walk = (n: protobuf.NamespaceBase) => {
    for (const o of n.nestedArray) {
      if (o instanceof protobuf.Type) {
        messages.push({
          name: name(o), ...(o.comment ? { comment: o.comment } : {}),
          fields: o.fieldsArray.map((f) => fieldOf(f, opts)),
          ...idFieldOf(o),
        });
      } else if (o instanceof protobuf.Enum) {
        enums.push({
          name: name(o), ...(o.comment ? { comment: o.comment } : {}),
          values: Object.entries(o.values).map(([k, v]) => ({
            name: k, number: v, ...(o.comments[k] ? { comment: o.comments[k]! } : {}),
          })),
        });
      }
      if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) walk(o);
    }
  };
  walk(ns);
  return { messages, enums };
}
