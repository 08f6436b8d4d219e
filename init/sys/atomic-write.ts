// atomic-write: replace a file so that after a crash or power loss it holds either the
// old content or the new one, never a mix: write a temporary file beside it, fsync it,
// rename it over the old one, fsync the directory (which makes the rename durable).
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally { closeSync(fd); }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new Error(`cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
  syncDirectory(dirname(path));
}

/** fsync of a directory: makes the names created, renamed or removed in it durable. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
}
