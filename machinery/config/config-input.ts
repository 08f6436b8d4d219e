// config-input: what a config must be before a YAML parser may see it: bytes are
// bounded, gzip is undone with a bounded output, the text must be UTF-8
// (decodeConfigInput); the nesting is bounded by the linear scan of yaml-guard.ts, which
// parseDocuments runs on every text it is given.
import { lazyZlib } from '../sys/lazy-builtins.ts';

export { MAX_BLOCK_COLUMN, MAX_FLOW_DEPTH, scanNesting } from '../../cosi/spec/yaml-guard.ts';

/** Largest config accepted, after decompression. EC2 allows 16 KiB of user data, GCE 256 KiB. */
export const MAX_CONFIG_BYTES = 1 << 20;

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
      data = lazyZlib().gunzipSync(bytes, { maxOutputLength: limit + 1 });
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
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return { ok: false, message: 'config is not UTF-8 text' };
  }
  return { ok: true, text, compressed };
}
