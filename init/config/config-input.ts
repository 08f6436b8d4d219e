// config-input: what a config must be before a YAML parser may see it. The parser
// recurses once per nesting level (100,000 levels overflow the stack after most of a
// second) and a huge input costs seconds, so bytes are bounded, gzip is undone with a
// bounded output, the text must be UTF-8 (decodeConfigInput), and a linear scan bounds
// the nesting (scanNesting, which parseDocuments runs on every text it is given).
import { gunzipSync } from 'node:zlib';

/** Largest config accepted, after decompression. EC2 allows 16 KiB of user data, GCE 256 KiB. */
export const MAX_CONFIG_BYTES = 1 << 20;
/** Deepest flow nesting ([ and {) accepted. */
export const MAX_FLOW_DEPTH = 64;
/** Furthest block nesting accepted, as the column where a line's content starts ("- - x" counts as indentation). */
export const MAX_BLOCK_COLUMN = 512;

export type ConfigInput = { ok: true; text: string; compressed: boolean } | { ok: false; message: string };

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];
const startsWith = (b: Uint8Array, magic: number[]) => magic.every((x, i) => b[i] === x);
const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

/** Bytes of a config (plain or gzip) as text, or why not. Its nesting is checked where it is parsed. */
export function decodeConfigInput(bytes: Uint8Array, limit = MAX_CONFIG_BYTES): ConfigInput {
  let data = bytes;
  let compressed = false;
  if (startsWith(bytes, GZIP)) {
    try {
      data = gunzipSync(bytes, { maxOutputLength: limit + 1 });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ERR_BUFFER_TOO_LARGE') {
        return { ok: false, message: `gzip input expands beyond the ${size(limit)} limit` };
      }
      return { ok: false, message: `gzip input is damaged: ${err.message}` };
    }
    compressed = true;
  } else if (startsWith(bytes, ZSTD)) {
    return { ok: false, message: 'zstd-compressed input is not supported: compress with gzip' };
  }
  if (data.length > limit) {
    return { ok: false, message: `config is ${size(data.length)}, larger than the ${size(limit)} limit` };
  }
  let text: string;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(data); } catch {
    return { ok: false, message: 'config is not UTF-8 text' };
  }
  return { ok: true, text, compressed };
}

const isSpace = (c: number) => c === 0x20 || c === 0x09;
const NL = 0x0a;

/**
 * Why `text` nests deeper than a YAML parser may be asked to go, or undefined. Linear
 * and without recursion. Quoted scalars, comments and block scalars (| >) are skipped;
 * a bracket inside a plain scalar ("a [b") opens nothing. Errs on the side of letting
 * text through: the parser reports malformed YAML itself.
 */
export function scanNesting(text: string, maxFlow = MAX_FLOW_DEPTH, maxColumn = MAX_BLOCK_COLUMN): string | undefined {
  let flow = 0;
  let line = 1;
  let i = 0;
  const n = text.length;
  // Block scalar content: lines indented more than this belong to it (-1: not in one).
  let scalarParent = -1;
  const skipQuoted = (q: number): void => {
    for (i++; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === NL) line++;
      else if (q === 0x22 && c === 0x5c) i++; // \" in a double-quoted scalar
      else if (c === q) {
        if (q === 0x27 && text.charCodeAt(i + 1) === 0x27) { i++; continue; } // '' in a single-quoted one
        return;
      }
    }
  };
  while (i < n) {
    // At a line start: measure the indentation, with compact indicators ("- ", "? ", ": ") counted as indentation.
    const start = i;
    while (i < n && text.charCodeAt(i) === 0x20) i++;
    const indent = i - start;
    if (i < n && text.charCodeAt(i) !== NL && scalarParent >= 0 && indent > scalarParent) {
      while (i < n && text.charCodeAt(i) !== NL) i++;
      if (i < n) { i++; line++; }
      continue;
    }
    if (i < n && text.charCodeAt(i) !== NL && text.charCodeAt(i) !== 0x23) scalarParent = -1;
    if (flow === 0) {
      for (;;) {
        const c = text.charCodeAt(i);
        if ((c === 0x2d || c === 0x3f || c === 0x3a) && (isSpace(text.charCodeAt(i + 1)))) {
          i += 2;
          while (i < n && isSpace(text.charCodeAt(i))) i++;
        } else break;
      }
      if (i - start > maxColumn && text.charCodeAt(i) !== NL && i < n) {
        return `line ${line}: nested deeper than the limit (content starts at column ${i - start + 1}, `
          + `at most ${maxColumn} allowed)`;
      }
    }
    // The rest of the line.
    let valueStart = true; // a flow collection or quoted scalar may open here
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === NL) { line++; i++; break; }
      if (c === 0x23 && (i === 0 || isSpace(text.charCodeAt(i - 1)) || text.charCodeAt(i - 1) === NL)) {
        while (i < n && text.charCodeAt(i) !== NL) i++;
        continue;
      }
      if (flow > 0 || valueStart) {
        if (c === 0x5b || c === 0x7b) {
          if (++flow > maxFlow) {
            return `line ${line}: nested deeper than the limit (more than ${maxFlow} open [ or {)`;
          }
          valueStart = true;
          i++;
          continue;
        }
        if (c === 0x22 || c === 0x27) { skipQuoted(c); i++; valueStart = false; continue; }
        if (flow === 0 && (c === 0x7c || c === 0x3e)) { scalarParent = indent; valueStart = false; i++; continue; }
      }
      if (flow > 0) {
        if (c === 0x5d || c === 0x7d) flow--;
        valueStart = c === 0x2c || c === 0x5b || c === 0x7b || (c === 0x3a && isSpace(text.charCodeAt(i + 1)))
          || (isSpace(c) && valueStart);
      } else {
        // Block context: a value starts after ": " (and spaces); anything else is inside a plain scalar or key.
        valueStart = (c === 0x3a && isSpace(text.charCodeAt(i + 1))) || (isSpace(c) && valueStart);
      }
      i++;
    }
  }
  return undefined;
}
