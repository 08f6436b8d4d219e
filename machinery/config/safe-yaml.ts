// safe-yaml: one YAML (or JSON) document from untrusted input: cloud-init's meta-data,
// network-config and #cloud-config. The same guarded parse as every untrusted YAML
// (cosi/spec/yaml-guard.ts): size, nesting, duplicate keys and aliases bounded.
import { MAX_ALIAS_COUNT, parseUntrustedYaml, type YamlParsed } from '../../cosi/spec/yaml-guard.ts';

export { MAX_ALIAS_COUNT };

export type Parsed = YamlParsed;

export function parseYaml(text: string): Parsed {
  return parseUntrustedYaml(text);
}

export const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
