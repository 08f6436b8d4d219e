// system-image: the squashfs inside the initramfs that holds everything big: the executable
// as /init, the native addon, the shared libraries they need and the kernel's modules.
// stage0 (image/stage0/) mounts it read-only at /system/image and executes /init from it;
// the initramfs links each of its top-level directories (lib, lib64) from the root, so
// /lib/modules and the ELF interpreter's path are where they always were.
// Why not unpacked: what the kernel unpacks stays in RAM for good; a page of this image
// is read and decompressed only when a process touches it, and may be dropped again.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync, closeSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { normalizePath, sortEntries, type CpioEntry } from './cpio.ts';
import { sharedLibs } from './elf-deps.ts';
import { modulesAlias, modulesDep, modulesSoftdep, scanModules } from './modules-dep.ts';
import { SYSTEM_IMAGE_MOUNT as SYSTEM_IMAGE_DIR } from '../machinery/disk/labels.ts';
import { probe, PROBE_BYTES } from '../machinery/sys/superblock.ts';

/** Where the image keeps the kernel's modules, one folder per kernel release. */
export const MODULES_DIR = 'lib/modules';

/** The image's file in the initramfs, and where stage0 mounts it (both without the leading slash). */
export const SYSTEM_IMAGE_FILE = 'system.squashfs';
export const SYSTEM_IMAGE_MOUNT = SYSTEM_IMAGE_DIR.replace(/^\//, '');

export interface SystemImageInputs {
  /** The single executable; becomes /init in the image (/system/image/init on the machine). */
  init: string;
  /** The native addon; becomes lib/appliance_native.node, found beside the executable's lib/. */
  addon: string;
  /** The kernel's modules, `<dir>/<release>/kernel/...`; shipped as lib/modules/<release> with a modules.dep. */
  modules?: { dir: string; release: string };
}

/** How the image is compressed: squashfs's compressor, its level (zstd) and block size. */
export interface SystemImageCompression {
  compressor: 'zstd' | 'xz' | 'lz4' | 'none';
  level?: number;
  blockSize: string;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Bump when writeSystemImage changes what it writes from the same entries (the build's cache key). */
export const SYSTEM_IMAGE_RECIPE = '1';

/**
 * The release's compression (measured: see ARCHITECTURE.md, "The system image"). A page fault decompresses the page's
 * whole block (stage0 turns readahead off, so no more than that): 32 KiB blocks cost 2.5 MB of image over 128 KiB ones
 * and bring every milestone 0.24-0.34 s earlier.
 */
export const RELEASE_COMPRESSION: SystemImageCompression = { compressor: 'zstd', level: 19, blockSize: '32K' };

export const describeCompression = (c: SystemImageCompression) => (c.compressor === 'none' ? 'uncompressed'
  : `${c.compressor}${c.level === undefined ? '' : ` -${c.level}`}, ${c.blockSize} blocks`);

/**
 * The image as a disk holds it (stage0 reads it from the block device): uncompressed, because decompressing the pages
 * a boot touches is most of what Node's start costs, and a disk, unlike the initramfs, is not RAM. Measured
 * (ARCHITECTURE.md, "Where the image is read from"): API ready 2.50 -> 1.52 s, 27 MiB less used.
 */
export const DISK_COMPRESSION: SystemImageCompression = { compressor: 'none', blockSize: '128K' };

/** The disk form's image and initramfs in the build's directory (scripts/build.ts): the disk images' slot A. */
export const DISK_SYSTEM_IMAGE = 'system-disk.squashfs';
export const DISK_INITRAMFS = 'initramfs-disk.cpio.zst';
/** The disk form's image zstd'd, as an upgrade bundle carries it (a third of its size). */
export const DISK_SYSTEM_IMAGE_ZST = `${DISK_SYSTEM_IMAGE}.zst`;
/**
 * Its level: the image is uncompressed, so zstd finds much to take out. 93 MB: -3 ~32 MB, -9 29.0 MB in 1.4 s on two
 * cores, -19 25.5 MB in 39 s; a machine decompresses any of them at the same speed.
 */
export const DISK_IMAGE_ZSTD_LEVEL = 9;

/** The bytes of the image's superblock that name it: stage0 looks for a block device that starts with them. */
export const SUPERBLOCK_BYTES = 96;
/** Where the initramfs of a system whose image is on a disk keeps the superblock (stage0.c, SUPERBLOCK). */
export const SUPERBLOCK_FILE = 'system.superblock';

/** Files only (the directories follow from their paths); paths relative to the image's root. */
export function systemImageEntries(i: SystemImageInputs): CpioEntry[] {
  const entries: CpioEntry[] = [];
  const add = (path: string, data: Buffer, mode: number) => entries.push(
    { type: 'file', path: normalizePath(path), mode, data, uid: 0, gid: 0 },
  );
  const file = (path: string, source: string, mode: number) => add(path, readFileSync(source), mode);
  file('init', i.init, 0o755);
  file('lib/appliance_native.node', i.addon, 0o755);
  for (const lib of sharedLibs([i.init, i.addon])) file(lib.path, lib.source, 0o755);
  if (i.modules) entries.push(...moduleEntries(i.modules));
  return sortEntries(entries);
}

/** The image's lib/modules/<release>: the kernel's modules with the modules.dep, .alias and .softdep made of them. */
export function moduleEntries(modules: { dir: string; release: string }): CpioEntry[] {
  const root = join(modules.dir, modules.release);
  const dir = join(MODULES_DIR, modules.release);
  const add = (path: string, data: Buffer): CpioEntry => (
    { type: 'file', path: normalizePath(path), mode: 0o644, data, uid: 0, gid: 0 });
  const shipped = scanModules(root);
  return [
    ...filesUnder(root).map((f) => add(join(dir, relative(root, f)), readFileSync(f))),
    add(join(dir, 'modules.dep'), Buffer.from(modulesDep(shipped))),
    add(join(dir, 'modules.alias'), Buffer.from(modulesAlias(shipped))),
    add(join(dir, 'modules.softdep'), Buffer.from(modulesSoftdep(shipped))),
  ];
}

/** The image's top-level directories: the initramfs links each from its root. */
export const topLevelDirs = (entries: readonly CpioEntry[]): string[] => [...new Set(
  entries.map((e) => e.path.split('/')).filter((parts) => parts.length > 1).map((parts) => parts[0]!),
)].sort();

/**
 * Writes the image with mksquashfs from a staging copy of `entries`. Reproducible: every file
 * owned by root, every time `mtime`, no extended attributes, entries in name order.
 */
export function writeSystemImage(
  entries: readonly CpioEntry[], output: string, mtime: number, c: SystemImageCompression,
  o: { identify?: boolean } = {},
): void {
  const stage = mkdtempSync(join(tmpdir(), 'system-image-'));
  try {
    chmodSync(stage, 0o755); // the image's root: mkdtemp makes it 0700
    for (const e of entries) {
      if (e.type !== 'file') throw new Error(`system image: ${e.path} is a ${e.type}; the image holds files only`);
      const to = join(stage, e.path);
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, e.data);
      chmodSync(to, e.mode & 0o7777);
    }
    const level = c.level === undefined ? [] : ['-Xcompression-level', String(c.level)];
    const compress = c.compressor === 'none' ? ['-noI', '-noId', '-noD', '-noF', '-noX']
      : ['-comp', c.compressor, ...level];
    run('mksquashfs', [
      stage, output, '-noappend', '-quiet', '-no-progress', '-all-root', '-no-xattrs',
      '-mkfs-time', String(o.identify ? contentTime(entries) : mtime), '-all-time', String(mtime), ...compress,
      '-b', c.blockSize,
    ]);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * A superblock's mkfs time made of the files (31 bits of their sha256): two images with the same sizes and layout
 * but different bytes then start differently, so the superblock stage0 looks for names one build's image.
 */
export function contentTime(entries: readonly CpioEntry[]): number {
  const h = createHash('sha256');
  for (const e of entries) {
    h.update(`${e.type}\0${e.path}\0`);
    if (e.type === 'file') h.update(`${e.mode}\0`).update(e.data);
  }
  return h.digest().readUInt32BE(0) >>> 1;
}

/** The first SUPERBLOCK_BYTES of an image file; throws, naming what the file holds, when it is no squashfs. */
export function readSuperblock(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(PROBE_BYTES); // what probe() needs to name another filesystem
    const n = readSync(fd, b, 0, PROBE_BYTES, 0);
    if (n < SUPERBLOCK_BYTES) throw new Error(`${file}: ${n} bytes, shorter than a squashfs superblock`);
    const found = probe(b.subarray(0, n))?.fstype;
    if (found !== 'squashfs') throw new Error(`${file}: not a squashfs image (${found ?? 'no filesystem'} found)`);
    return Buffer.from(b.subarray(0, SUPERBLOCK_BYTES));
  } finally {
    closeSync(fd);
  }
}

/** The files of a system image written by writeSystemImage (unpacked with unsquashfs), in name order. */
export function readSystemImage(file: string): CpioEntry[] {
  const stage = mkdtempSync(join(tmpdir(), 'system-image-read-'));
  try {
    const root = join(stage, 'root');
    run('unsquashfs', ['-quiet', '-no-progress', '-no-xattrs', '-dest', root, file]);
    return sortEntries(filesUnder(root).map((f): CpioEntry => {
      const st = lstatSync(f);
      if (!st.isFile()) throw new Error(`system image ${file}: ${relative(root, f)} is not a file (files only)`);
      return { type: 'file', path: normalizePath(relative(root, f)), mode: st.mode & 0o7777, data: readFileSync(f),
        uid: 0, gid: 0 };
    }));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { status?: number | null; stderr?: Buffer };
    if (err.code === 'ENOENT') {
      throw new Error(`cannot run ${cmd} (npm run setup installs squashfs-tools)`, { cause: e });
    }
    throw new Error(`${cmd} exited ${err.status}: ${err.stderr?.toString().trim() ?? ''}`, { cause: e });
  }
}
