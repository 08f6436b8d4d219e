// filesystems: FAT32 and ext4 filesystems made as image files, without root, loop
// devices or mounts (mkfs.vfat + mtools, mkfs.ext4 -d), identical for identical inputs:
// fixed volume ids, UUIDs and hash seeds, and every timestamp the build's epoch.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** What goes into a filesystem: a path inside it -> a file on the host, or the bytes themselves. */
export type Tree = Record<string, string | Buffer>;

/** Stages `tree` (plus empty `dirs`) under a fresh directory, every mtime `epoch`. */
export function stageTree(workDir: string, tree: Tree, dirs: readonly string[], epoch: number): string {
  const root = mkdtempSync(join(workDir, 'tree-'));
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
  for (const [path, from] of Object.entries(tree)) {
    const to = join(root, path);
    mkdirSync(dirname(to), { recursive: true });
    if (typeof from === 'string') copyFileSync(from, to);
    else writeFileSync(to, from);
  }
  const touch = (p: string): void => {
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) touch(join(p, n));
    utimesSync(p, epoch, epoch);
  };
  touch(root);
  return root;
}

export interface FatOptions {
  file: string;
  sizeMiB: number;
  label: string;
  /** 8 hex digits; GRUB and blkid show it as XXXX-XXXX. */
  volumeId: string;
  tree: Tree;
  dirs?: readonly string[];
  epoch: number;
  workDir: string;
  /** FAT32 (default; needs 33 MiB or more) or FAT12/16 for small images such as an ISO's EFI boot image. */
  fatBits?: 12 | 16 | 32;
}

/** A FAT image holding `tree`. */
export function fatImage(o: FatOptions): void {
  if (!/^[0-9A-Fa-f]{8}$/.test(o.volumeId)) throw new Error(`FAT volume id "${o.volumeId}": 8 hex digits`);
  rmSync(o.file, { force: true });
  const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
  // --invariant fixes the label entry's time (mkfs.vfat ignores SOURCE_DATE_EPOCH); given before -i, which
  // then still sets the volume id (after it, --invariant rewrites half of it). mcopy -m keeps the staged mtimes.
  execFileSync('mkfs.vfat', [
    '--invariant', '-i', o.volumeId, '-F', String(o.fatBits ?? 32), '-n', o.label, '-C', o.file,
    String(o.sizeMiB * 1024),
  ], { stdio: ['ignore', 'ignore', 'pipe'], env });
  const root = stageTree(o.workDir, o.tree, o.dirs ?? [], o.epoch);
  const top = readdirSync(root).sort().map((n) => join(root, n));
  if (top.length) {
    execFileSync('mcopy', ['-s', '-m', '-Q', '-i', o.file, ...top, '::/'],
      { stdio: ['ignore', 'ignore', 'pipe'], env });
  }
  rmSync(root, { recursive: true });
}

export interface Ext4Options {
  file: string;
  sizeMiB: number;
  label: string;
  uuid: string;
  hashSeed: string;
  tree?: Tree;
  epoch: number;
  workDir: string;
  /** Features beyond mkfs.ext4's defaults (-O), such as quota and project. */
  features?: string[];
}

/** An ext4 image, empty or holding `tree` (root-owned). */
export function ext4Image(o: Ext4Options): void {
  rmSync(o.file, { force: true });
  const root = o.tree ? stageTree(o.workDir, o.tree, [], o.epoch) : undefined;
  execFileSync('mkfs.ext4', [
    '-q', '-F', '-L', o.label, '-U', o.uuid, '-E', `hash_seed=${o.hashSeed},root_owner=0:0`,
    ...(o.features?.length ? ['-O', o.features.join(',')] : []),
    ...(root ? ['-d', root] : []), o.file, `${o.sizeMiB}M`,
    // E2FSPROGS_FAKE_TIME=0 would mean "not set": the epoch 0 is written as 1 s past it.
  ], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, E2FSPROGS_FAKE_TIME: String(o.epoch || 1) } });
  if (root) rmSync(root, { recursive: true });
}
