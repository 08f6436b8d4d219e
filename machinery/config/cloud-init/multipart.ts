// multipart: MIME user-data (cloud-init's format for several parts, or one part with MIME
// headers) -> its parts, each with its content type and decoded body. Only what cloud-init
// writers produce: one level of nesting, base64 or 7bit/8bit/quoted-printable-free bodies.

export interface MimePart { type: string; filename?: string; body: string }

export type Multipart = { ok: true; parts: MimePart[] } | { ok: false; message: string };

/** True when the text starts with MIME headers announcing multipart content. */
export function isMultipart(text: string): boolean {
  const head = text.slice(0, 4096).split(/\r?\n\r?\n/, 1)[0] ?? '';
  return /^content-type:\s*multipart\//im.test(head);
}

/** True when the text is a MIME message of one part: it starts with MIME headers, one of them its Content-Type. */
export function isSinglePartMime(text: string): boolean {
  const head = text.slice(0, 4096).split(/\r?\n\r?\n/, 1)[0] ?? '';
  return /^(content-type|mime-version):/i.test(head) && /^content-type:/im.test(head) && !isMultipart(text)
    && /\r?\n\r?\n/.test(text);
}

function headers(block: string): Map<string, string> {
  const h = new Map<string, string>();
  // Continuation lines (folded headers) start with white space.
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) h.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return h;
}

const param = (value: string, name: string) =>
  new RegExp(`;\\s*${name}="?([^";]+)"?`, 'i').exec(value)?.[1];

/** The one part of a single-part MIME message: its type and decoded body. */
export function parseSinglePart(text: string): MimePart {
  const split = /\r?\n\r?\n/.exec(text)!;
  return partOf(headers(text.slice(0, split.index)), text.slice(split.index + split[0].length));
}

function partOf(h: Map<string, string>, raw: string): MimePart {
  const type = (h.get('content-type') ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
  const content = (h.get('content-transfer-encoding') ?? '').toLowerCase() === 'base64'
    ? Buffer.from(raw.replace(/\s+/g, ''), 'base64').toString('utf8') : raw;
  const filename = param(h.get('content-disposition') ?? '', 'filename');
  return { type, ...(filename ? { filename } : {}), body: content.replace(/^\s*\n/, '') };
}

export function parseMultipart(text: string, depth = 0): Multipart {
  const split = /\r?\n\r?\n/.exec(text);
  if (!split) return { ok: false, message: 'MIME: no blank line after the headers' };
  const top = headers(text.slice(0, split.index));
  const contentType = top.get('content-type') ?? '';
  const boundary = param(contentType, 'boundary');
  if (!boundary) return { ok: false, message: `MIME: no boundary in "Content-Type: ${contentType}"` };
  const body = text.slice(split.index + split[0].length);
  const chunks = body.split(new RegExp(`(?:^|\\r?\\n)--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  if (chunks.length < 2) return { ok: false, message: `MIME: boundary "${boundary}" never appears` };
  const parts: MimePart[] = [];
  // chunks[0] is the preamble; a chunk starting with "--" is the end marker (and the epilogue).
  for (const chunk of chunks.slice(1)) {
    if (chunk.startsWith('--')) break;
    const sep = /\r?\n\r?\n/.exec(chunk);
    const h = headers(sep ? chunk.slice(0, sep.index) : chunk);
    const raw = sep ? chunk.slice(sep.index + sep[0].length) : '';
    const part = partOf(h, raw);
    if (part.type.startsWith('multipart/')) {
      if (depth > 0) return { ok: false, message: 'MIME: multipart nested more than one level' };
      const inner = parseMultipart(`Content-Type: ${h.get('content-type')}\n\n${part.body}`, depth + 1);
      if (!inner.ok) return inner;
      parts.push(...inner.parts);
      continue;
    }
    parts.push(part);
  }
  return { ok: true, parts };
}
