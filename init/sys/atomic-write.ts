// atomic-write: replace a file so that after a crash or power loss it holds either the
// old content or the new one, never a mix: write a temporary file beside it, fsync it,
// rename it over the old one, fsync the directory (which makes the rename durable).
// writeFileAtomicAsync does the same through the thread pool, for PID 1 while it serves the
// API: each fsync waits on the disk, for seconds on a slow one.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

const tmpBeside = (path: string) => join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);

export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = tmpBeside(path);
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

export async function writeFileAtomicAsync(
  path: string, data: string | Uint8Array, mode = 0o600, beforeRename?: () => void,
): Promise<void> {
  const tmp = tmpBeside(path);
  try {
    const file = await open(tmp, 'w', mode);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally { await file.close(); }
    beforeRename?.();
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw new Error(`cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
  await syncDirectoryAsync(dirname(path));
}

/** fsync of a directory: makes the names created, renamed or removed in it durable. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

async function syncDirectoryAsync(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try { await d.sync(); } finally { await d.close(); }
}
