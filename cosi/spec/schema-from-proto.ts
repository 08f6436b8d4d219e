// schema-from-proto: the spec schema of a message, derived from its fields, their
// protobuf types and the (appliance.v1alpha1.rules) options (proto/appliance/v1alpha1/
// options.proto), with the field comments as descriptions. The .proto is the one source
// of truth: nothing here is written per type.
import type { SpecSchema } from '../meta/schema.ts';
import { enumValueName, TIMESTAMP, type FieldInfo, type MessageSet } from './message-info.ts';

const INT_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1], sint32: [-(2 ** 31), 2 ** 31 - 1], sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1], fixed32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], sint64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  sfixed64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER], fixed64: [0, Number.MAX_SAFE_INTEGER],
};

const described = <S extends SpecSchema>(s: S, comment: string | undefined): S =>
  (comment ? { ...s, description: comment } : s);

function valueSchema(set: MessageSet, f: FieldInfo, owner: string, depth: number): SpecSchema {
  const r = f.rules ?? {};
  if (f.kind === 'enum') {
    const e = set.enums.get(f.type!);
    if (!e) throw new Error(`${owner}.${f.name}: enum ${f.type} is not known`);
    return { type: 'string', enum: e.values.filter((v) => v.number !== 0).map((v) => enumValueName(e.name, v.name)) };
  }
  if (f.kind === 'message') {
    if (f.type === TIMESTAMP) return { type: 'string', format: 'timestamp' };
    return schemaFromMessage(set, f.type!, depth + 1);
  }
  if (f.kind === 'string') {
    return {
      type: 'string',
      ...(r.pattern ? { pattern: r.pattern } : {}), ...(r.patternHelp ? { patternHelp: r.patternHelp } : {}),
      ...(r.format ? { format: r.format } : {}), ...(r.maxLength !== undefined ? { maxLength: r.maxLength } : {}),
      ...(r.required && !f.repeated ? { minLength: 1 } : {}),
    };
  }
  if (f.kind === 'bool') return { type: 'boolean' };
  if (f.kind === 'double' || f.kind === 'float') {
    return {
      type: 'number',
      ...(r.minimum !== undefined ? { minimum: r.minimum } : {}),
      ...(r.maximum !== undefined ? { maximum: r.maximum } : {}),
    };
  }
  const range = INT_RANGE[f.kind];
  if (range) {
    return {
      type: 'integer',
      minimum: Math.max(range[0], r.minimum ?? -Infinity), maximum: Math.min(range[1], r.maximum ?? Infinity),
    };
  }
  throw new Error(`${owner}.${f.name}: field type ${f.kind} has no spec form (bytes are not allowed in specs)`);
}

/** The schema of a message's object form. */
export function schemaFromMessage(set: MessageSet, name: string, depth = 0): SpecSchema {
  if (depth > 16) throw new Error(`${name}: messages nest deeper than 16 levels (recursive?)`);
  const info = set.messages.get(name);
  if (!info) throw new Error(`message ${name} is not known`);
  const properties: Record<string, SpecSchema> = {};
  const required: string[] = [];
  for (const f of info.fields) {
    const value = valueSchema(set, f, name, depth);
    let s: SpecSchema;
    if (f.mapKey) s = { type: 'object', additionalProperties: value };
    else if (f.repeated) {
      const r = f.rules ?? {};
      s = {
        type: 'array', items: value,
        ...(r.maxItems !== undefined ? { maxItems: r.maxItems } : {}), ...(r.required ? { minItems: 1 } : {}),
      };
    } else s = value;
    properties[f.key] = described(s, f.comment);
    if (f.rules?.required) required.push(f.key);
  }
  return described({
    type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false,
  }, info.comment);
}
