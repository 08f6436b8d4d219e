// safe-yaml: one YAML (or JSON) document from untrusted input, with the same guarded parse
// as every untrusted YAML (cosi/spec/yaml-guard.ts): size, nesting and aliases bounded.
//   parseYaml    our own formats: YAML 1.2, a duplicated key refuses the document
//   parsePyYaml  cloud-init's meta-data, network-config and #cloud-config, read as cloud-init
//                reads them (PyYAML: YAML 1.1, the last of duplicated keys wins, with a warning)
import { MAX_ALIAS_COUNT, parseUntrustedYaml, type YamlParsed } from '../../cosi/spec/yaml-guard.ts';

export { MAX_ALIAS_COUNT };

export type Parsed = YamlParsed;

export function parseYaml(text: string): Parsed {
  return parseUntrustedYaml(text);
}

export function parsePyYaml(text: string): Parsed {
  return parseUntrustedYaml(text, { dialect: 'pyyaml' });
}

export const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date);
