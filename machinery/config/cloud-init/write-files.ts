// write-files: cloud-config's write_files -> FileSpec documents (ids cloud-init-file-N).
// What a FileSpec can say is translated: content as text, base64 or YAML !!binary (gzip undone
// here), permissions. An entry this system cannot honour (a path outside /run, /var and /tmp,
// append, content from a URL, setuid bits) is left out with why; an owner other than root
// is noted, since the file is still written (as root: this system has no other users).
import { lazyZlib } from '../../sys/lazy-builtins.ts';
import { FILE_SPEC_TYPE } from '../../../proto/gen/resource-types.ts';
import { isMap } from '../safe-yaml.ts';
import type { Translation } from './translation.ts';

/** What a FileSpec's content may hold, decoded; gunzip stops here rather than fill memory. */
const MAX_FILE_BYTES = 1 << 20;
const ALLOWED_PATH = /^\/(run|var|tmp)(\/(?!\.\.?(\/|$))[^/\0]+)+$/;

/** cloud-init's encodings, by the name it accepts (cc_write_files: canonicalize_extraction). */
const ENCODINGS: Record<string, { base64: boolean; gzip: boolean }> = {
  'text/plain': { base64: false, gzip: false },
  b64: { base64: true, gzip: false }, base64: { base64: true, gzip: false },
  'gz+b64': { base64: true, gzip: true }, 'gz+base64': { base64: true, gzip: true },
  'gzip+b64': { base64: true, gzip: true }, 'gzip+base64': { base64: true, gzip: true },
  gz: { base64: false, gzip: true }, gzip: { base64: false, gzip: true },
};

/**
 * cloud-init's permissions -> "0644". Its rule (decode_perms): an integer is the mode itself (YAML 1.1 reads an
 * unquoted 0644 as 420, and 420 written in decimal is the same mode), a string is octal ("0644", "0o644", "644").
 */
export function octalMode(v: unknown): string | Error {
  let bits: number | undefined;
  if (typeof v === 'number' && Number.isFinite(v)) bits = Math.trunc(v);
  else if (typeof v === 'string' && /^\s*\+?(0o)?[0-7](_?[0-7])*\s*$/i.test(v)) {
    bits = parseInt(v.trim().replace(/^\+/, '').replace(/^0o/i, '').replace(/_/g, ''), 8);
  }
  if (bits === undefined || bits < 0) {
    return new Error(`permissions ${JSON.stringify(v)} are not a mode: an integer, or octal text such as "0644"`);
  }
  if (bits > 0o777) {
    const as = typeof v === 'number' ? ` (the integer ${v} is mode 0${bits.toString(8)}: write "0${v}" or 0o${v} `
      + 'for an octal mode)' : '';
    return new Error(`permissions ${JSON.stringify(v)} set setuid, setgid or sticky bits, which files here cannot `
      + `have${as}`);
  }
  return `0${bits.toString(8).padStart(3, '0')}`;
}

type Content = { content: string; encoding?: 'base64' };

/** The bytes are kept as text when they are text, as base64 otherwise. */
function asContent(bytes: Buffer): Content {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) && !text.includes('\0')
    ? { content: text } : { content: bytes.toString('base64'), encoding: 'base64' };
}

/** An entry's content as cloud-init writes it: text, or bytes (YAML !!binary), base64 and gzip undone in order. */
function contentOf(entry: Record<string, unknown>, notes: string[]): Content | Error {
  const given = entry.encoding === undefined ? 'text/plain' : String(entry.encoding).toLowerCase().trim();
  const known = ENCODINGS[given];
  if (!known) notes.push(`encoding "${given}" is not one cloud-init knows: written as text/plain, as it does`);
  const enc = known ?? ENCODINGS['text/plain']!;
  const raw = entry.content ?? '';
  if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) return new Error('content must be text or !!binary');
  if (!enc.base64 && !enc.gzip) return typeof raw === 'string' ? { content: raw } : asContent(Buffer.from(raw));
  let bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw);
  if (enc.base64) bytes = Buffer.from(bytes.toString('latin1').replace(/\s+/g, ''), 'base64');
  if (enc.gzip) {
    try {
      bytes = lazyZlib().gunzipSync(bytes, { maxOutputLength: MAX_FILE_BYTES });
    } catch (e) {
      return new Error(`content is not gzip of at most ${MAX_FILE_BYTES >> 20} MiB (${(e as Error).message})`);
    }
  }
  return asContent(bytes);
}

/** One write_files entry -> a FileSpec, or why it is left out; notes say what was changed. */
function translateEntry(entry: unknown, notes: string[]): Record<string, unknown> | Error {
  if (!isMap(entry)) return new Error('must be a mapping with a path');
  const path = entry.path;
  if (typeof path !== 'string' || !path) return new Error('has no path');
  if (!ALLOWED_PATH.test(path)) {
    return new Error(`${path}: only files under /run, /var and /tmp are written (the image itself is read-only)`);
  }
  if (entry.append === true) return new Error(`${path}: append is not supported (a FileSpec declares the whole file)`);
  if (entry.source !== undefined) return new Error(`${path}: content from a URL (source) is not fetched`);
  const contentNotes: string[] = [];
  const content = contentOf(entry, contentNotes);
  notes.push(...contentNotes.map((n) => `${path}: ${n}`));
  if (content instanceof Error) return new Error(`${path}: ${content.message}`);
  const mode = entry.permissions === undefined ? undefined : octalMode(entry.permissions);
  if (mode instanceof Error) return new Error(`${path}: ${mode.message}`);
  const owner = entry.owner === undefined ? 'root:root' : String(entry.owner);
  if (!/^root(:root)?$/.test(owner)) {
    notes.push(`${path}: owner ${owner} ignored, written as root (there are no other users)`);
  }
  for (const key of Object.keys(entry)) {
    if (!['path', 'content', 'encoding', 'permissions', 'owner', 'append', 'defer', 'source'].includes(key)) {
      notes.push(`${path}: ${key} is not a write_files key`);
    }
  }
  return { path, ...content, ...(mode ? { mode } : {}) };
}

export function translateWriteFiles(value: unknown): Translation {
  const ignored: string[] = [];
  if (!Array.isArray(value)) return { docs: [], ignored: ['write_files: must be a list of files'] };
  const specs = new Map<string, { index: number; spec: Record<string, unknown> }>();
  value.forEach((entry, index) => {
    const notes: string[] = [];
    const spec = translateEntry(entry, notes);
    ignored.push(...notes.map((n) => `write_files[${index}] ${n}`));
    if (spec instanceof Error) {
      ignored.push(`write_files[${index}] ${spec.message}`);
      return;
    }
    // cloud-init writes the entries in order, so the last one for a path is what stays.
    const earlier = specs.get(spec.path as string);
    if (earlier) ignored.push(`write_files[${earlier.index}] ${spec.path}: replaced by write_files[${index}]`);
    specs.delete(spec.path as string);
    specs.set(spec.path as string, { index, spec });
  });
  const docs = [...specs.values()].map(({ index, spec }) => ({
    type: FILE_SPEC_TYPE, id: `cloud-init-file-${index}`, spec,
  }));
  return { docs, ignored };
}
