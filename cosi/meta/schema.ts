// schema: a small spec schema (a JSON-schema subset) carried by our resource
// definitions, so a whole config can be validated before anything is written, by
// cosictl and by the server alike. Built-in types derive theirs from their protobuf
// message (spec/schema-from-proto.ts); a user-defined type may bring its own.
// Errors name the field path and the bad value.
import { isIP } from 'node:net';

export type StringFormat = 'ip' | 'ipv4' | 'ipv6' | 'cidr' | 'mac' | 'hostname' | 'duration' | 'timestamp';

interface Described { description?: string }
export type SpecSchema = Described & (
  | {
    type: 'object'; properties?: Record<string, SpecSchema>; required?: string[];
    additionalProperties?: boolean | SpecSchema;
  }
  | {
    type: 'string'; enum?: string[]; pattern?: string; patternHelp?: string; format?: StringFormat;
    minLength?: number; maxLength?: number;
  }
  | { type: 'integer' | 'number'; minimum?: number; maximum?: number }
  | { type: 'boolean' }
  | { type: 'array'; items: SpecSchema; minItems?: number; maxItems?: number }
  | { type: 'any' }
);

export const STRING_FORMATS: readonly StringFormat[] = [
  'ip', 'ipv4', 'ipv6', 'cidr', 'mac', 'hostname', 'duration', 'timestamp',
];

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 80) ?? String(v);

function checkFormat(format: string, v: string): boolean {
  switch (format) {
    case 'ip': return isIP(v) !== 0;
    case 'ipv4': return isIP(v) === 4;
    case 'ipv6': return isIP(v) === 6;
    case 'cidr': {
      const [a, p, ...rest] = v.split('/');
      const fam = isIP(a ?? '');
      return rest.length === 0 && fam !== 0 && /^\d+$/.test(p ?? '') && Number(p) <= (fam === 4 ? 32 : 128);
    }
    case 'mac': return /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(v);
    case 'hostname':
      return v.length <= 253 && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(v);
    case 'duration': return /^(\d+(\.\d+)?(ms|s|m|h))+$/.test(v);
    case 'timestamp':
      return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) && !Number.isNaN(Date.parse(v));
    default: return true;
  }
}

export const FORMAT_WORDS: Record<StringFormat, string> = {
  ip: 'an IP address', ipv4: 'an IPv4 address', ipv6: 'an IPv6 address',
  cidr: 'an address with a prefix length (e.g. 192.0.2.10/24)',
  mac: 'a MAC address (aa:bb:cc:dd:ee:ff)', hostname: 'a host name', duration: 'a duration (e.g. 30s, 5m, 1h30m)',
  timestamp: 'an RFC 3339 time (e.g. 2026-01-02T03:04:05Z)',
};

/** Returns one message per problem: "<path>: <what is wrong>, got <value>". Empty when valid. */
export function validateSpec(schema: SpecSchema, value: unknown, path = 'spec'): string[] {
  const errs: string[] = [];
  switch (schema.type) {
    case 'any': break;
    case 'boolean':
      if (typeof value !== 'boolean') errs.push(`${path}: must be true or false, got ${show(value)}`);
      break;
    case 'integer': case 'number': {
      const integer = schema.type === 'integer';
      if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
        errs.push(`${path}: must be ${integer ? 'an integer' : 'a number'}, got ${show(value)}`);
        break;
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        errs.push(`${path}: must be >= ${schema.minimum}, got ${value}`);
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        errs.push(`${path}: must be <= ${schema.maximum}, got ${value}`);
      }
      break;
    }
    case 'string': {
      if (typeof value !== 'string') {
        const hint = typeof value === 'number' || typeof value === 'boolean' ? ` (quote it: "${String(value)}")` : '';
        errs.push(`${path}: must be a string, got ${show(value)}${hint}`);
        break;
      }
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        errs.push(schema.minLength === 1
          ? `${path}: must not be empty`
          : `${path}: at least ${schema.minLength} characters, got ${value.length}`);
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        errs.push(`${path}: at most ${schema.maxLength} characters, got ${value.length}`);
      }
      if (schema.enum && !schema.enum.includes(value)) {
        errs.push(`${path}: must be one of ${schema.enum.join(', ')}, got ${show(value)}`);
      }
      if (schema.pattern && !new RegExp(schema.pattern).test(value)) {
        errs.push(`${path}: must be ${schema.patternHelp ?? `text matching ${schema.pattern}`}, got ${show(value)}`);
      }
      if (schema.format && !checkFormat(schema.format, value)) {
        errs.push(`${path}: must be ${FORMAT_WORDS[schema.format]}, got ${show(value)}`);
      }
      break;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        errs.push(`${path}: must be a list, got ${show(value)}`);
        break;
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        errs.push(schema.minItems === 1
          ? `${path}: must not be empty`
          : `${path}: at least ${schema.minItems} items, got ${value.length}`);
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        errs.push(`${path}: at most ${schema.maxItems} items, got ${value.length}`);
      }
      value.forEach((item, i) => errs.push(...validateSpec(schema.items, item, `${path}[${i}]`)));
      break;
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        errs.push(`${path}: must be a mapping, got ${show(value)}`);
        break;
      }
      const obj = value as Record<string, unknown>;
      for (const k of schema.required ?? []) {
        if (!(k in obj) || obj[k] === undefined || obj[k] === null) errs.push(`${path}.${k}: required`);
      }
      for (const [k, v] of Object.entries(obj)) {
        const prop = schema.properties?.[k];
        if (prop) {
          if (v !== undefined && v !== null) errs.push(...validateSpec(prop, v, `${path}.${k}`));
          continue;
        }
        const extra = schema.additionalProperties ?? false;
        if (extra === false) {
          const knownFields = schema.properties ? ` (known: ${Object.keys(schema.properties).join(', ')})` : '';
          errs.push(`${path}.${k}: unknown field${knownFields}`);
        } else if (extra !== true) errs.push(...validateSpec(extra, v, `${path}.${k}`));
      }
      break;
    }
  }
  return errs;
}

/** Problems with a schema itself (a user-defined type brings one): unknown types, bad patterns. */
export function checkSchema(s: unknown, path = 'schema', depth = 0): string[] {
  if (depth > 32) return [`${path}: nested deeper than 32 levels`];
  if (s === null || typeof s !== 'object' || Array.isArray(s)) return [`${path}: must be a mapping with a type`];
  const o = s as Record<string, unknown>;
  const errs: string[] = [];
  const known: Record<string, string[]> = {
    object: ['properties', 'required', 'additionalProperties'],
    string: ['enum', 'pattern', 'patternHelp', 'format', 'minLength', 'maxLength'],
    integer: ['minimum', 'maximum'], number: ['minimum', 'maximum'], boolean: [],
    array: ['items', 'minItems', 'maxItems'], any: [],
  };
  const type = o.type;
  if (typeof type !== 'string' || !(type in known)) {
    return [`${path}.type: must be one of ${Object.keys(known).join(', ')}, got ${show(type)}`];
  }
  for (const k of Object.keys(o)) {
    if (k !== 'type' && k !== 'description' && !known[type]!.includes(k)) {
      errs.push(`${path}.${k}: not a keyword of a ${type} schema`);
    }
  }
  if (type === 'object') {
    const props = o.properties;
    if (props !== undefined && (props === null || typeof props !== 'object' || Array.isArray(props))) {
      errs.push(`${path}.properties: must be a mapping`);
    } else {
      for (const [k, v] of Object.entries(props ?? {})) {
        errs.push(...checkSchema(v, `${path}.properties.${k}`, depth + 1));
      }
    }
    if (o.required !== undefined && (!Array.isArray(o.required) || o.required.some((x) => typeof x !== 'string'))) {
      errs.push(`${path}.required: must be a list of field names`);
    }
    const extra = o.additionalProperties;
    if (extra !== undefined && typeof extra !== 'boolean') {
      errs.push(...checkSchema(extra, `${path}.additionalProperties`, depth + 1));
    }
  }
  if (type === 'array') errs.push(...checkSchema(o.items, `${path}.items`, depth + 1));
  if (type === 'string') {
    if (o.pattern !== undefined) {
      try {
        new RegExp(String(o.pattern));
      } catch (e) {
        errs.push(`${path}.pattern: ${(e as Error).message}`);
      }
    }
    if (o.format !== undefined && !STRING_FORMATS.includes(o.format as StringFormat)) {
      errs.push(`${path}.format: must be one of ${STRING_FORMATS.join(', ')}`);
    }
    if (o.enum !== undefined && (!Array.isArray(o.enum) || o.enum.some((x) => typeof x !== 'string'))) {
      errs.push(`${path}.enum: must be a list of strings`);
    }
  }
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']) {
    if (o[k] !== undefined && (typeof o[k] !== 'number' || !Number.isFinite(o[k]))) {
      errs.push(`${path}.${k}: must be a number`);
    }
  }
  return errs;
}
