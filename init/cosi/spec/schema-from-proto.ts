// schema-from-proto: the spec schema of a message type, derived from its fields, their
// protobuf types and the (appliance.v1alpha1.rules) options (proto/appliance/v1alpha1/
// options.proto), with the field comments as descriptions. The .proto is the one source
// of truth: nothing here is written per type.
import protobuf from 'protobufjs';
import type { SpecSchema, StringFormat } from '../meta/schema.ts';
import { enumValueName } from './proto-object.ts';

const RULE = '(appliance.v1alpha1.rules).';

interface Rules {
  required?: boolean; pattern?: string; patternHelp?: string; format?: StringFormat;
  minimum?: number; maximum?: number; maxItems?: number; maxLength?: number;
}

/** The rules of a field, from protobufjs's flattened option names. */
export function fieldRules(f: protobuf.Field): Rules {
  const o = f.options ?? {};
  const get = (k: string) => o[`${RULE}${k}`] as never;
  const r: Rules = {};
  const set = <K extends keyof Rules>(k: K, v: Rules[K] | undefined) => { if (v !== undefined) r[k] = v; };
  set('required', get('required'));
  set('pattern', get('pattern'));
  set('patternHelp', get('pattern_help') ?? get('patternHelp'));
  set('format', get('format'));
  set('minimum', get('minimum'));
  set('maximum', get('maximum'));
  set('maxItems', get('max_items') ?? get('maxItems'));
  set('maxLength', get('max_length') ?? get('maxLength'));
  return r;
}

const INT_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1], sint32: [-(2 ** 31), 2 ** 31 - 1], sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1], fixed32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], sint64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  sfixed64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER], fixed64: [0, Number.MAX_SAFE_INTEGER],
};

const described = <S extends SpecSchema>(s: S, comment: string | null | undefined): S => (comment ? { ...s, description: comment } : s);

function valueSchema(f: protobuf.Field, r: Rules, depth: number): SpecSchema {
  const t = f.resolvedType;
  if (t instanceof protobuf.Enum) {
    return { type: 'string', enum: Object.entries(t.values).filter(([, n]) => n !== 0).map(([k]) => enumValueName(t.name, k)) };
  }
  if (t instanceof protobuf.Type) {
    if (t.fullName === '.google.protobuf.Timestamp') return { type: 'string', format: 'timestamp' };
    return schemaFromMessage(t, depth + 1);
  }
  if (f.type === 'string') {
    return {
      type: 'string',
      ...(r.pattern ? { pattern: r.pattern } : {}), ...(r.patternHelp ? { patternHelp: r.patternHelp } : {}),
      ...(r.format ? { format: r.format } : {}), ...(r.maxLength !== undefined ? { maxLength: r.maxLength } : {}),
      ...(r.required && !f.repeated ? { minLength: 1 } : {}),
    };
  }
  if (f.type === 'bool') return { type: 'boolean' };
  if (f.type === 'double' || f.type === 'float') {
    return { type: 'number', ...(r.minimum !== undefined ? { minimum: r.minimum } : {}), ...(r.maximum !== undefined ? { maximum: r.maximum } : {}) };
  }
  const range = INT_RANGE[f.type];
  if (range) return { type: 'integer', minimum: Math.max(range[0], r.minimum ?? -Infinity), maximum: Math.min(range[1], r.maximum ?? Infinity) };
  throw new Error(`${f.fullName}: field type ${f.type} has no spec form (bytes are not allowed in specs)`);
}

/** The schema of a message type's object form. */
export function schemaFromMessage(type: protobuf.Type, depth = 0): SpecSchema {
  if (depth > 16) throw new Error(`${type.fullName}: messages nest deeper than 16 levels (recursive?)`);
  type.resolveAll();
  const properties: Record<string, SpecSchema> = {};
  const required: string[] = [];
  for (const f of type.fieldsArray) {
    const r = fieldRules(f);
    const value = valueSchema(f, r, depth);
    let s: SpecSchema;
    if (f.map) s = { type: 'object', additionalProperties: value };
    else if (f.repeated) {
      s = { type: 'array', items: value, ...(r.maxItems !== undefined ? { maxItems: r.maxItems } : {}), ...(r.required ? { minItems: 1 } : {}) };
    } else s = value;
    const key = protobuf.util.camelCase(f.name);
    properties[key] = described(s, f.comment);
    if (r.required) required.push(key);
  }
  return described({ type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }, type.comment);
}
