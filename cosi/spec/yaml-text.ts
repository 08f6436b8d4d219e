// yaml-text: the yaml_spec text of a spec's object form. A small block-style emitter
// for JSON-like data (objects, lists, strings, numbers, booleans, null), an order of
// magnitude faster than a general YAML library, which a List of 10,000 feels. It
// quotes every string a YAML 1.1 or 1.2 reader could take for something else
// (numbers, booleans, null, dates, "yes"), so PyYAML, yaml.v3 and `yaml` read back
// exactly the value written.

const PLAIN = /^[A-Za-z][A-Za-z0-9_./-]*$/;
/** Words YAML 1.1 readers turn into booleans or null. */
const RESERVED = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null', 'nan', 'inf']);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`yaml-text: ${v} has no YAML form here`);
    const s = String(v);
    // YAML 1.1 floats need a dot before the exponent (1e+21 would read as a string).
    return /e/.test(s) && !s.includes('.') ? s.replace('e', '.0e') : s;
  }
  if (typeof v === 'string') return PLAIN.test(v) && !RESERVED.has(v.toLowerCase()) ? v : JSON.stringify(v);
  throw new Error(`yaml-text: a ${typeof v} has no YAML form here`);
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function lines(v: unknown, indent: string, out: string[]): void {
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isMap(item) && Object.keys(item).length) {
        const sub: string[] = [];
        lines(item, `${indent}  `, sub);
        out.push(`${indent}- ${sub[0]!.slice(indent.length + 2)}`, ...sub.slice(1));
      } else if (Array.isArray(item) && item.length) {
        out.push(`${indent}-`);
        lines(item, `${indent}  `, out);
      } else out.push(`${indent}- ${inline(item)}`);
    }
    return;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === undefined) continue;
    if ((isMap(x) && Object.keys(x).length) || (Array.isArray(x) && x.length)) {
      out.push(`${indent}${scalar(k)}:`);
      lines(x, isMap(x) ? `${indent}  ` : indent, out);
    } else out.push(`${indent}${scalar(k)}: ${inline(x)}`);
  }
}

function inline(v: unknown): string {
  if (Array.isArray(v)) return '[]';
  if (isMap(v)) return '{}';
  return scalar(v);
}

/** Block-style YAML of a JSON-like value, ending with a newline ('' for null/undefined). */
export function yamlText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if ((isMap(v) && Object.keys(v).length) || (Array.isArray(v) && v.length)) {
    const out: string[] = [];
    lines(v, '', out);
    return `${out.join('\n')}\n`;
  }
  return `${inline(v)}\n`;
}

/**
 * A yaml_spec as one line of JSON, which every YAML reader takes: for specs clients read by the hundred
 * (definitions, 110 KiB of schemas on every cosictl call), which our client then reads with JSON.parse
 * (codec.ts readSpec), a hundred times faster than a YAML parse. '' for null/undefined, as yamlText.
 */
export function jsonYamlText(v: unknown): string {
  return v === null || v === undefined ? '' : `${JSON.stringify(v)}\n`;
}
