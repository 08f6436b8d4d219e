// safe-yaml: one YAML (or JSON) document from untrusted input: cloud-init's meta-data,
// network-config and #cloud-config. The same guards as the machine config: nesting
// bounded before the parser sees it, aliases bounded while it builds values.
import YAML from 'yaml';
import { scanNesting } from './config-input.ts';

/** The most nodes aliases may expand to (an alias bomb is refused, not expanded). */
export const MAX_ALIAS_COUNT = 100;

export type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

export function parseYaml(text: string): Parsed {
  const deep = scanNesting(text);
  if (deep) return { ok: false, message: deep };
  const d = YAML.parseDocument(text);
  if (d.errors.length) return { ok: false, message: `not valid YAML: ${d.errors[0]!.message.split('\n')[0]}` };
  try {
    return { ok: true, value: d.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (e) {
    return { ok: false, message: `not accepted: ${(e as Error).message}` };
  }
}

export const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
