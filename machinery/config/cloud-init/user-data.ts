// user-data: what a platform hands over as user data -> the machine config to apply.
//   our own config      multi-document YAML of resources, used as it is
//   #cloud-config       translated (cloud-config.ts)
//   MIME multipart      its cloud-config parts translated and merged in order, our own
//                       config parts (text/x-appliance-config) used, other parts ignored;
//                       a MIME message of one part is read as that part
//   ## template: jinja  rendered from the instance data first (jinja.ts), then read as above;
//                       so is a MIME part that is a template (text/jinja2 or the header)
//   scripts, #include   ignored, with why
// gzip is undone first; size, UTF-8 and nesting are checked as for any config. cloud-config
// YAML is read as cloud-init reads it (PyYAML: YAML 1.1, duplicated keys warned about).
import { yamlLibrary } from '../../../cosi/spec/yaml-library.cjs';
import { decodeConfigInput } from '../config-input.ts';
import { isMap, parsePyYaml } from '../safe-yaml.ts';
import { translateCloudConfig } from './cloud-config.ts';
import { isJinja, jinjaRenderer, noJinja, type InstanceData, type JinjaRender } from './jinja.ts';
import type { ConfigDocument } from './translation.ts';
import { isMultipart, isSinglePartMime, parseMultipart, parseSinglePart, type MimePart } from './multipart.ts';

export type UserDataFormat = 'machine-config' | 'cloud-config' | 'jinja' | 'multipart' | 'script' | 'empty';
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
  return docs.map((d) => yamlLibrary().stringify({ metadata: { type: d.type, id: d.id }, spec: d.spec })).join('---\n');
}

type CloudConfig = { ok: true; cfg: Record<string, unknown>; warnings: string[] } | { ok: false; message: string };

function cloudConfigOf(text: string, what: string): CloudConfig {
  const p = parsePyYaml(text);
  if (!p.ok) return { ok: false, message: `${what}: ${p.message}` };
  const warnings = (p.warnings ?? []).map((w) => `${what} ${w}`);
  if (p.value === null || p.value === undefined) return { ok: true, cfg: {}, warnings };
  if (!isMap(p.value)) return { ok: false, message: `${what}: must be a mapping of cloud-config keys` };
  return { ok: true, cfg: p.value, warnings };
}

const CLOUD_CONFIG = /^#cloud-config\s*(\n|$)/;

/** Which kind of user data a text is, from its first line or headers (nothing parsed; a BOM skipped). */
export function userDataFormat(withBom: string): UserDataFormat {
  const text = withBom.replace(/^\uFEFF/, '');
  if (!text.trim()) return 'empty';
  if (CLOUD_CONFIG.test(text)) return 'cloud-config';
  if (isJinja(text)) return 'jinja';
  if (isMultipart(text) || isSinglePartMime(text)) return 'multipart';
  if (directives.some(([re]) => re.test(text))) return 'script';
  return 'machine-config';
}

/** Whether rendering may be needed: a template, or MIME that may hold one (cheap; nothing parsed). */
const mayNeedJinja = (text: string) => isJinja(text) || /^content-type:/im.test(text.slice(0, 4096));

/**
 * User data -> the machine config it means. `instanceData` renders Jinja templates (nunjucks is loaded only when
 * the user data may hold one); without it a template is refused, saying so.
 */
export async function translateUserData(bytes: Uint8Array, instanceData?: InstanceData): Promise<UserDataResult> {
  const input = decodeConfigInput(bytes);
  if (!input.ok) return { ok: false, message: `user-data: ${input.message}` };
  const render = instanceData && mayNeedJinja(input.text) ? await jinjaRenderer(instanceData) : noJinja;
  return fromText(input.text, render);
}

/** translateUserData with a renderer given: synchronous. */
export function translateUserDataWith(bytes: Uint8Array, render: JinjaRender): UserDataResult {
  const input = decodeConfigInput(bytes);
  if (!input.ok) return { ok: false, message: `user-data: ${input.message}` };
  return fromText(input.text, render);
}

/** User data already decoded (gzip undone, UTF-8 checked) -> the config it means. */
function fromText(decoded: string, render: JinjaRender): UserDataResult {
  let text = decoded.replace(/^\uFEFF/, '');
  let format = userDataFormat(text);
  if (format === 'jinja') {
    const r = render(text);
    if (!r.ok) return { ok: false, message: `user-data (## template: jinja): ${r.message}` };
    text = r.text;
    format = userDataFormat(text);
    if (format === 'jinja') return { ok: false, message: 'user-data: a Jinja template that renders to another one' };
  }
  switch (format) {
    case 'empty': return { ok: true, data: { format, config: '', ignored: [] } };
    case 'cloud-config': {
      const c = cloudConfigOf(text, 'user-data (#cloud-config)');
      if (!c.ok) return c;
      const t = translateCloudConfig(c.cfg);
      return { ok: true, data: { format, config: documentsToYaml(t.docs), ignored: [...c.warnings, ...t.ignored] } };
    }
    case 'multipart': return fromMime(text, render);
    case 'script': {
      const why = directives.find(([re]) => re.test(text))![1];
      const ignored = [`user-data (${text.split('\n')[0]!.slice(0, 40)}): ${why}`];
      return { ok: true, data: { format, config: '', ignored } };
    }
    default: return { ok: true, data: { format, config: text, ignored: [] } };
  }
}

/** A part that is a template (text/jinja2, or the header line) rendered, with the type its first line then says. */
function renderedPart(part: MimePart, render: JinjaRender, what: string): MimePart | { message: string } {
  if (part.type !== 'text/jinja2' && !isJinja(part.body)) return part;
  const r = render(part.body);
  if (!r.ok) return { message: `${what}: ${r.message}` };
  return { ...part, type: CLOUD_CONFIG.test(r.text) ? 'text/cloud-config' : 'text/plain', body: r.text };
}

function fromMime(text: string, render: JinjaRender): UserDataResult {
  const m = isMultipart(text) ? parseMultipart(text) : { ok: true as const, parts: [parseSinglePart(text)] };
  if (!m.ok) return { ok: false, message: `user-data: ${m.message}` };
  const ignored: string[] = [];
  const ours: string[] = [];
  let merged: Record<string, unknown> | undefined;
  for (const [i, given] of m.parts.entries()) {
    const what = `user-data part ${i + 1} (${given.type}${given.filename ? `, ${given.filename}` : ''})`;
    const part = renderedPart(given, render, what);
    if ('message' in part) return { ok: false, message: part.message };
    if (part.type === 'text/cloud-config' || CLOUD_CONFIG.test(part.body)) {
      const c = cloudConfigOf(part.body, what);
      if (!c.ok) return c;
      ignored.push(...c.warnings);
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
