// user-data: what a platform hands over as user data -> the machine config to apply.
//   our own config      multi-document YAML of resources, used as it is
//   #cloud-config       translated (cloud-config.ts)
//   MIME multipart      its cloud-config parts translated and merged in order, our own
//                       config parts (text/x-appliance-config) used, other parts ignored
//   scripts, #include   ignored, with why
// gzip is undone first; size, UTF-8 and nesting are checked as for any config.
import YAML from 'yaml';
import { decodeConfigInput } from '../config-input.ts';
import { isMap, parseYaml } from '../safe-yaml.ts';
import { translateCloudConfig } from './cloud-config.ts';
import type { ConfigDocument } from './translation.ts';
import { isMultipart, parseMultipart } from './multipart.ts';

export type UserDataFormat = 'machine-config' | 'cloud-config' | 'multipart' | 'script' | 'empty';
export interface UserData { format: UserDataFormat; config: string; ignored: string[] }
export type UserDataResult = { ok: true; data: UserData } | { ok: false; message: string };

/** The MIME type of a part that is this system's own config. */
export const APPLIANCE_CONFIG_MIME = 'text/x-appliance-config';

const NO_SHELL = 'not run: this system has no shell';
const directives: [RegExp, string][] = [
  [/^#!/, `a script, ${NO_SHELL}`], [/^#cloud-boothook/, `a boothook, ${NO_SHELL}`],
  [/^#include/, 'includes are not fetched (give the config itself)'],
  [/^#part-handler/, `a part handler, ${NO_SHELL}`],
  [/^#cloud-config-archive/, 'cloud-config archives are not supported'],
  [/^#upstart-job/, NO_SHELL],
];

export function documentsToYaml(docs: readonly ConfigDocument[]): string {
  return docs.map((d) => YAML.stringify({ metadata: { type: d.type, id: d.id }, spec: d.spec })).join('---\n');
}

type CloudConfig = { ok: true; cfg: Record<string, unknown> } | { ok: false; message: string };

function cloudConfigOf(text: string, what: string): CloudConfig {
  const p = parseYaml(text);
  if (!p.ok) return { ok: false, message: `${what}: ${p.message}` };
  if (p.value === null || p.value === undefined) return { ok: true, cfg: {} };
  if (!isMap(p.value)) return { ok: false, message: `${what}: must be a mapping of cloud-config keys` };
  return { ok: true, cfg: p.value };
}

const CLOUD_CONFIG = /^#cloud-config\s*(\n|$)/;

/** Which kind of user data a text is, from its first line or headers (nothing parsed; a BOM skipped). */
export function userDataFormat(withBom: string): UserDataFormat {
  const text = withBom.replace(/^\uFEFF/, '');
  if (!text.trim()) return 'empty';
  if (CLOUD_CONFIG.test(text)) return 'cloud-config';
  if (isMultipart(text)) return 'multipart';
  if (directives.some(([re]) => re.test(text))) return 'script';
  return 'machine-config';
}

export function translateUserData(bytes: Uint8Array): UserDataResult {
  const input = decodeConfigInput(bytes);
  if (!input.ok) return { ok: false, message: `user-data: ${input.message}` };
  const text = input.text.replace(/^\uFEFF/, '');
  const format = userDataFormat(text);
  switch (format) {
    case 'empty': return { ok: true, data: { format, config: '', ignored: [] } };
    case 'cloud-config': {
      const c = cloudConfigOf(text, 'user-data (#cloud-config)');
      if (!c.ok) return c;
      const t = translateCloudConfig(c.cfg);
      return { ok: true, data: { format, config: documentsToYaml(t.docs), ignored: t.ignored } };
    }
    case 'multipart': return fromMultipart(text);
    case 'script': {
      const why = directives.find(([re]) => re.test(text))![1];
      const ignored = [`user-data (${text.split('\n')[0]!.slice(0, 40)}): ${why}`];
      return { ok: true, data: { format, config: '', ignored } };
    }
    default: return { ok: true, data: { format, config: text, ignored: [] } };
  }
}

function fromMultipart(text: string): UserDataResult {
  const m = parseMultipart(text);
  if (!m.ok) return { ok: false, message: `user-data: ${m.message}` };
  const ignored: string[] = [];
  const ours: string[] = [];
  let merged: Record<string, unknown> | undefined;
  for (const [i, part] of m.parts.entries()) {
    const what = `user-data part ${i + 1} (${part.type}${part.filename ? `, ${part.filename}` : ''})`;
    if (part.type === 'text/cloud-config' || CLOUD_CONFIG.test(part.body)) {
      const c = cloudConfigOf(part.body, what);
      if (!c.ok) return c;
      // Parts merge in order, a later part's key replacing an earlier one's (cloud-init's default merge).
      merged = { ...merged, ...c.cfg };
    } else if (part.type === APPLIANCE_CONFIG_MIME) {
      ours.push(part.body);
    } else {
      const directive = directives.find(([re]) => re.test(part.body));
      ignored.push(`${what}: ${directive?.[1] ?? (part.type === 'text/x-shellscript' ? `a script, ${NO_SHELL}`
        : 'not a kind this system reads (text/cloud-config or text/x-appliance-config)')}`);
    }
  }
  const t = merged ? translateCloudConfig(merged) : { docs: [], ignored: [] };
  const config = [...(t.docs.length ? [documentsToYaml(t.docs)] : []), ...ours].join('---\n');
  return { ok: true, data: { format: 'multipart', config, ignored: [...ignored, ...t.ignored] } };
}
