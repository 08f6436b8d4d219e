// atomic-write: replace a file so that after a crash or power loss it holds either the
// old content or the new one, never a mix: write a temporary file beside it, fsync it,
// rename it over the old one, fsync the directory (which makes the rename durable), and fsync the file
// again under its new name: on FAT (the EFI system partition) a rename makes a fresh directory entry of
// size 0 that only the file's own write-back fills in, so a power cut after the directory's fsync alone
// left an empty file (seen under OVMF: the upgrade record read back as 0 bytes).
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
  syncPath(path);
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
  await syncPathAsync(dirname(path));
  await syncPathAsync(path);
}

/** fsync of a file or directory opened read-only (Linux flushes an inode whatever the mode it was opened in). */
function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsync of a directory: makes the names created, renamed or removed in it durable. */
export const syncDirectory: (dir: string) => void = syncPath;

async function syncPathAsync(path: string): Promise<void> {
  const d = await open(path, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
