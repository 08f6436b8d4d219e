// initramfs: the root filesystem the kernel unpacks, kept small because it stays in RAM:
// stage0 as /init, the system image (system-image.ts: the executable, addon, libraries and
// modules, compressed) that stage0 mounts, a link from the root to each of the image's
// top-level directories, the build's own files (upgrade key), a few directories and the two
// device nodes the kernel and libc expect before devtmpfs is mounted. No shell, no busybox.
// Deterministic: sorted entries, fixed mtime, uid/gid 0.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { encodeCpio, normalizePath, sortEntries, type CpioEntry } from './cpio.ts';
import { zstd } from './zstd.ts';
import { readSuperblock, SUPERBLOCK_FILE, SYSTEM_IMAGE_FILE, SYSTEM_IMAGE_MOUNT } from './system-image.ts';

export interface InitramfsInputs {
  /** stage0 (image/stage0/), a static executable; becomes /init. */
  stage0: string;
  /**
   * The system image (squashfs) and its top-level directories, each linked from the root. `onDisk`: the image is
   * not in the initramfs but on a disk; only its superblock is, for stage0 to find that disk by.
   */
  systemImage: { file: string; topLevelDirs: readonly string[]; onDisk?: boolean };
  /** Fixed mtime for every entry (SOURCE_DATE_EPOCH). */
  mtime: number;
  /** Files of the build's own (the trusted upgrade key), by absolute path in the image. */
  files?: { path: string; data: Buffer; mode: number }[];
}

const DIRS = ['dev', 'etc', 'proc', 'run', 'sys', 'tmp', 'var', 'system', SYSTEM_IMAGE_MOUNT];

export function initramfsEntries(i: InitramfsInputs): CpioEntry[] {
  const t = { mtime: i.mtime, uid: 0, gid: 0 };
  const entries: CpioEntry[] = [];
  const dirs = new Set(DIRS);
  const add = (path: string, data: Buffer, mode: number) => {
    const p = normalizePath(path);
    for (let d = dirname(p); d !== '.'; d = dirname(d)) dirs.add(d);
    entries.push({ type: 'file', path: p, mode, data, ...t });
  };
  add('init', readFileSync(i.stage0), 0o755);
  if (i.systemImage.onDisk) add(SUPERBLOCK_FILE, readSuperblock(i.systemImage.file), 0o444);
  else add(SYSTEM_IMAGE_FILE, readFileSync(i.systemImage.file), 0o444);
  for (const d of i.systemImage.topLevelDirs) {
    if (dirs.has(d)) throw new Error(`the system image's ${d}/ would hide the initramfs's own ${d}/`);
    entries.push({ type: 'symlink', path: d, target: `/${SYSTEM_IMAGE_MOUNT}/${d}`, ...t });
  }
  for (const f of i.files ?? []) add(f.path.replace(/^\/+/, ''), f.data, f.mode);
  for (const d of dirs) entries.push({ type: 'dir', path: d, mode: d === 'tmp' ? 0o1777 : 0o755, ...t });
  // The kernel opens /dev/console for init's stdio before anything is mounted.
  entries.push({ type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1, ...t });
  entries.push({ type: 'chardev', path: 'dev/null', mode: 0o666, major: 1, minor: 3, ...t });
  return sortEntries(entries);
}

/**
 * The initramfs's zstd level: what it holds is the system image, already compressed, so a higher
 * level only costs build time.
 */
export const INITRAMFS_ZSTD_LEVEL = 3;

/**
 * The compressed initramfs's limit, bytes: what the kernel unpacks it never gives back. 20 MB held the Node 20 runtime;
 * Node 24's executable is 22 MB larger, and 32 KiB squashfs blocks cost 4.9 MB more than 1 MiB ones, for a start
 * 0.3 s sooner and no seizing up near memory's end (ARCHITECTURE.md, "Which Node", "The system image"); the code
 * caches 1.9 MB more, for every milestone 4-12% sooner (image/code-cache.ts); a bundle per plugin 0.3 MB more, for
 * 15-20 MiB less used memory (image/bundle.ts). It keeps what the runtime costs from growing unseen.
 */
export const INITRAMFS_LIMIT_BYTES = 34.5e6;

/** Streams the archive into `zstd -<level>` (zstd.ts). */
export function writeCompressed(
  entries: readonly CpioEntry[], output: string, level = INITRAMFS_ZSTD_LEVEL,
): Promise<void> {
  return zstd(output, level, async (stdin) => {
    for (const chunk of encodeCpio(entries)) {
      if (!stdin.write(chunk)) await new Promise((r) => stdin.once('drain', r));
    }
  });
}
