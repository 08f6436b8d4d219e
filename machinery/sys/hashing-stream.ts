// hashing-stream: a pass-through that hashes and counts what streams by, so that a file is checked
// as it is written or copied, not read again afterwards (the image build, the installer).
import type { Hash } from 'node:crypto';
import { Transform } from 'node:stream';

export interface HashingStream extends Transform { readonly bytes: number }

/** Passes every chunk on after `h.update(chunk)`; `bytes` counts them; `onBytes` hears the running total. */
export function hashingStream(h: Hash, onBytes?: (total: number) => void): HashingStream {
  let bytes = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      h.update(chunk);
      bytes += chunk.length;
      onBytes?.(bytes);
      done(null, chunk);
    },
  });
  return Object.defineProperty(t, 'bytes', { get: () => bytes }) as HashingStream;
}
