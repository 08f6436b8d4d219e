// schema: a small spec schema (a JSON-schema subset) carried by our resource
// definitions, so a whole config can be validated before anything is written, by
// cosictl and by the server alike. Errors name the field path and the bad value.
import { isIP } from 'node:net';

export type SpecSchema =
  | { type: 'object'; properties?: Record<string, SpecSchema>; required?: string[]; additionalProperties?: boolean | SpecSchema; description?: string }
  | { type: 'string'; enum?: string[]; pattern?: string; format?: 'ip' | 'ipv4' | 'ipv6' | 'cidr' | 'mac' | 'hostname' | 'duration'; description?: string }
  | { type: 'integer' | 'number'; minimum?: number; maximum?: number; description?: string }
  | { type: 'boolean'; description?: string }
  | { type: 'array'; items: SpecSchema; maxItems?: number; description?: string }
  | { type: 'any'; description?: string };

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 80) ?? String(v);

function checkFormat(format: string, v: string): boolean {
  switch (format) {
    case 'ip': return isIP(v) !== 0;
    case 'ipv4': return isIP(v) === 4;
    case 'ipv6': return isIP(v) === 6;
    case 'cidr': { const [a, p, ...rest] = v.split('/'); const fam = isIP(a ?? ''); const n = Number(p); return rest.length === 0 && fam !== 0 && /^\d+$/.test(p ?? '') && n <= (fam === 4 ? 32 : 128); }
    case 'mac': return /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(v);
    case 'hostname': return v.length <= 253 && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(v);
    case 'duration': return /^(\d+(\.\d+)?(ms|s|m|h))+$/.test(v);
    default: return true;
  }
}

/** Returns one message per problem: "<path>: <what is wrong>, got <value>". Empty when valid. */
export function validateSpec(schema: SpecSchema, value: unknown, path = 'spec'): string[] {
  const errs: string[] = [];
  switch (schema.type) {
    case 'any': break;
    case 'boolean': if (typeof value !== 'boolean') errs.push(`${path}: must be true or false, got ${show(value)}`); break;
    case 'integer': case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value) || (schema.type === 'integer' && !Number.isInteger(value))) { errs.push(`${path}: must be ${schema.type === 'integer' ? 'an integer' : 'a number'}, got ${show(value)}`); break; }
      if (schema.minimum !== undefined && value < schema.minimum) errs.push(`${path}: must be >= ${schema.minimum}, got ${value}`);
      if (schema.maximum !== undefined && value > schema.maximum) errs.push(`${path}: must be <= ${schema.maximum}, got ${value}`);
      break;
    }
    case 'string': {
      if (typeof value !== 'string') { errs.push(`${path}: must be a string, got ${show(value)}`); break; }
      if (schema.enum && !schema.enum.includes(value)) errs.push(`${path}: must be one of ${schema.enum.join(', ')}, got ${show(value)}`);
      if (schema.pattern && !new RegExp(schema.pattern).test(value)) errs.push(`${path}: must match ${schema.pattern}, got ${show(value)}`);
      if (schema.format && !checkFormat(schema.format, value)) errs.push(`${path}: must be ${schema.format === 'ip' ? 'an IP address' : `a valid ${schema.format}`}, got ${show(value)}`);
      break;
    }
    case 'array': {
      if (!Array.isArray(value)) { errs.push(`${path}: must be a list, got ${show(value)}`); break; }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) errs.push(`${path}: at most ${schema.maxItems} items, got ${value.length}`);
      value.forEach((item, i) => errs.push(...validateSpec(schema.items, item, `${path}[${i}]`)));
      break;
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) { errs.push(`${path}: must be a mapping, got ${show(value)}`); break; }
      const obj = value as Record<string, unknown>;
      for (const k of schema.required ?? []) if (!(k in obj) || obj[k] === undefined || obj[k] === null) errs.push(`${path}.${k}: required`);
      for (const [k, v] of Object.entries(obj)) {
        const prop = schema.properties?.[k];
        if (prop) { if (v !== undefined && v !== null) errs.push(...validateSpec(prop, v, `${path}.${k}`)); continue; }
        const extra = schema.additionalProperties ?? false;
        if (extra === false) errs.push(`${path}.${k}: unknown field${schema.properties ? ` (known: ${Object.keys(schema.properties).join(', ')})` : ''}`);
        else if (extra !== true) errs.push(...validateSpec(extra, v, `${path}.${k}`));
      }
      break;
    }
  }
  return errs;
}
