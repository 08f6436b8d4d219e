// meta-data: NoCloud's meta-data (YAML, or JSON which is YAML too): the instance id and
// the hostname. Keys this system does not use are listed as ignored.
import { isMap, parsePyYaml } from '../safe-yaml.ts';

export interface MetaData {
  instanceId: string; hostname: string; ignored: string[];
  /** Every key as given (cloud-init's ds.meta_data, which Jinja user data may use). */
  raw: Record<string, unknown>;
}
export type MetaDataResult = { ok: true; meta: MetaData } | { ok: false; message: string };

export function parseMetaData(text: string): MetaDataResult {
  const p = parsePyYaml(text);
  if (!p.ok) return { ok: false, message: `meta-data: ${p.message}` };
  if (p.value === null || p.value === undefined) {
    return { ok: true, meta: { instanceId: '', hostname: '', ignored: [], raw: {} } };
  }
  if (!isMap(p.value)) {
    return { ok: false, message: 'meta-data: must be a mapping (instance-id: ..., local-hostname: ...)' };
  }
  const m = p.value;
  const str = (k: string) => (typeof m[k] === 'string' || typeof m[k] === 'number' ? String(m[k]) : '');
  const warnings = (p.warnings ?? []).map((w) => `meta-data ${w}`);
  const ignored = Object.keys(m).filter((k) => !['instance-id', 'local-hostname', 'hostname'].includes(k))
    .map((k) => `meta-data ${k}: ${k === 'public-keys' ? 'this system has no SSH logins' : 'not used by this system'}`);
  const hostname = str('local-hostname') || str('hostname');
  return { ok: true, meta: { instanceId: str('instance-id'), hostname, ignored: [...warnings, ...ignored], raw: m } };
}
