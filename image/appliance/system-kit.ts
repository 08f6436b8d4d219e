// system-kit: the system an appliance runs on, as built parts: the kernel, the system image (PID 1's executable,
// the addon, the plugins, the kernel's modules), stage0, and the kernel's config and the fragment it was made from
// (an appliance's kernel.fragment goes on top of them), each with its sha256, listed in system-kit.json. The
// repository's build writes one into out/build; the package carries one (dist/system), so that a build from the
// package compiles nothing. What is left to do per appliance is cheap and done here: the initramfs that trusts the
// appliance's own upgrade signing key.
import { createPublicKey } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { keyIdOf } from '../../machinery/disk/upgrade-bundle.ts';
import { writeFileAtomic } from '../../machinery/sys/atomic-write.ts';
import { IMAGE_KEYS_DIR } from '../../init/upgrade/trust.ts';
import { entriesKey, keyed } from '../build-cache.ts';
import type { DiskForm } from '../disk/raw.ts';
import type { SigningKey } from '../formats/format.ts';
import { sha256, sha256File } from '../hash.ts';
import { INITRAMFS_ZSTD_LEVEL, initramfsEntries, writeCompressed } from '../initramfs.ts';
import { zstd } from '../zstd.ts';
import {
  DISK_COMPRESSION, DISK_IMAGE_ZSTD_LEVEL, readSystemImage, SYSTEM_IMAGE_RECIPE, writeSystemImage,
  type SystemImageCompression,
} from '../system-image.ts';

export const SYSTEM_KIT_FILE = 'system-kit.json';

export interface KitFile { file: string; size: number; sha256: string }

export interface SystemKit {
  version: string;
  commit: string;
  /** The command line the system boots with unless the appliance adds to it. */
  cmdline: string;
  /** The system image's top-level directories, linked from the initramfs's root. */
  topLevelDirs: string[];
  /** The kernel modules the system image ships (every one the kernel build makes), by name. */
  modules: string[];
  /** The kernel's build: its cache key (scripts/kernel.ts), its source and release. */
  kernel: { key: string; source: string; release: string };
  /** How the system image is compressed: an appliance's own kernel gets a system image made the same way. */
  compression: SystemImageCompression;
  files: Record<KitPart, KitFile>;
}

/**
 * The kit's files. kernelConfig: the kernel's whole .config; kernelFragment: what it was made from on top of
 * tinyconfig (kernel-config/appliance.config: the options the system relies on).
 */
export const KIT_PARTS = ['vmlinuz', 'systemImage', 'stage0', 'kernelConfig', 'kernelFragment'] as const;
export type KitPart = typeof KIT_PARTS[number];

/** A kit whose files were found whole: each part's path. */
export interface OpenedKit extends SystemKit {
  dir: string;
  paths: Record<KitPart, string>;
}

export class SystemKitError extends Error {
  constructor(readonly kitDir: string, message: string, options?: ErrorOptions) {
    super(`system kit ${kitDir}: ${message}`, options);
    this.name = 'SystemKitError';
  }
}

/** A part of the kit in `dir` as system-kit.json lists it: its path from `dir`, size and sha256. */
export const describeKitFile = async (dir: string, p: string): Promise<KitFile> => ({
  file: relative(dir, p), size: statSync(p).size, sha256: await sha256File(p),
});

/**
 * Writes `dir`/system-kit.json describing the parts (kept where they are; paths relative to `dir`); the kit as
 * openSystemKit would give it, without reading the parts again.
 */
export async function writeSystemKit(dir: string, k: Omit<SystemKit, 'files'> & {
  paths: OpenedKit['paths'];
}): Promise<OpenedKit> {
  const files = {} as SystemKit['files'];
  for (const part of KIT_PARTS) files[part] = await describeKitFile(dir, k.paths[part]);
  const kit: SystemKit = {
    version: k.version, commit: k.commit, cmdline: k.cmdline.trim(), topLevelDirs: k.topLevelDirs,
    modules: [...k.modules].sort(), kernel: k.kernel, compression: k.compression, files,
  };
  const file = join(dir, SYSTEM_KIT_FILE);
  // Whole or not at all: a build beside this one may be reading it.
  writeFileAtomic(file, JSON.stringify(kit, null, 2) + '\n', 0o644);
  return { ...kit, dir, paths: { ...k.paths } };
}

/** Reads `dir`/system-kit.json and checks every part against its recorded size and sha256. */
export async function openSystemKit(dir: string): Promise<OpenedKit> {
  const file = join(dir, SYSTEM_KIT_FILE);
  if (!existsSync(file)) throw new SystemKitError(dir, `no ${SYSTEM_KIT_FILE}`);
  let kit: SystemKit;
  try {
    kit = JSON.parse(readFileSync(file, 'utf8')) as SystemKit;
  } catch (e) {
    throw new SystemKitError(dir, `${SYSTEM_KIT_FILE}: not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (!Array.isArray(kit.modules)) throw new SystemKitError(dir, `${SYSTEM_KIT_FILE} lists no modules`);
  if (typeof kit.kernel?.key !== 'string') throw new SystemKitError(dir, `${SYSTEM_KIT_FILE} names no kernel build`);
  if (typeof kit.compression?.compressor !== 'string') {
    throw new SystemKitError(dir, `${SYSTEM_KIT_FILE} names no system image compression`);
  }
  const paths = {} as OpenedKit['paths'];
  for (const name of KIT_PARTS) {
    const f = kit.files?.[name];
    if (!f) throw new SystemKitError(dir, `${SYSTEM_KIT_FILE} names no ${name}`);
    const p = join(dir, f.file);
    if (!existsSync(p)) throw new SystemKitError(dir, `${f.file} (${name}) is missing`);
    const size = statSync(p).size;
    if (size !== f.size) throw new SystemKitError(dir, `${f.file}: ${size} bytes, the kit says ${f.size}`);
    const got = await sha256File(p);
    if (got !== f.sha256) throw new SystemKitError(dir, `${f.file}: sha256 ${got}, the kit says ${f.sha256}`);
    paths[name] = p;
  }
  return { ...kit, dir, paths };
}

/** The initramfs file that makes a system trust upgrades signed by `key`. */
export function trustedKeyFile(key: SigningKey): { path: string; mode: number; data: Buffer } {
  const keyId = keyIdOf(key.privateKey);
  return {
    path: join(IMAGE_KEYS_DIR, `${keyId.replace(/^sha256:/, '').slice(0, 16)}.pem`), mode: 0o644,
    data: Buffer.from(createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' })),
  };
}

export interface KitInitramfsOptions {
  key: SigningKey;
  /** Other files the system carries (a broken test build's mark). */
  files?: { path: string; mode: number; data: Buffer }[];
  mtime: number;
  output: string;
  /** Where the key of the last one written is kept. */
  cacheDir: string;
}

/**
 * The kit's initramfs trusting `key`, written to `output` unless the same one is there; true when written. With
 * `onDisk` (the disk form's image), it holds that image's superblock in place of the kit's image.
 */
export function kitInitramfs(kit: OpenedKit, o: KitInitramfsOptions, onDisk?: string): Promise<boolean> {
  const entries = initramfsEntries({
    stage0: kit.paths.stage0,
    systemImage: onDisk ? { file: onDisk, topLevelDirs: kit.topLevelDirs, onDisk: true }
      : { file: kit.paths.systemImage, topLevelDirs: kit.topLevelDirs },
    mtime: o.mtime, files: [trustedKeyFile(o.key), ...o.files ?? []],
  });
  const key = sha256(String(INITRAMFS_ZSTD_LEVEL), entriesKey(entries));
  return keyed(o.cacheDir, onDisk ? 'initramfs-disk' : 'initramfs', key, [o.output],
    () => writeCompressed(entries, o.output, INITRAMFS_ZSTD_LEVEL));
}

/**
 * The kit's system in its disk form (stage0.c, from_disk): the kit's image made again uncompressed, named by its
 * superblock (and zstd'd beside it, `<image>.zst`, for upgrade bundles), and an initramfs like kitInitramfs's with that
 * superblock in place of the image. Each written unless the same one is there.
 */
export async function kitDiskForm(kit: OpenedKit, o: KitInitramfsOptions & { image: string }): Promise<DiskForm> {
  const imageKey = sha256(SYSTEM_IMAGE_RECIPE, JSON.stringify(DISK_COMPRESSION), String(o.mtime),
    String(DISK_IMAGE_ZSTD_LEVEL), kit.files.systemImage.sha256);
  const compressed = `${o.image}.zst`;
  await keyed(o.cacheDir, 'system-disk-image', imageKey, [o.image, compressed], async () => {
    writeSystemImage(readSystemImage(kit.paths.systemImage), o.image, o.mtime, DISK_COMPRESSION, { identify: true });
    await zstd(compressed, DISK_IMAGE_ZSTD_LEVEL, o.image);
  });
  await kitInitramfs(kit, o, o.image);
  return { image: o.image, initramfs: o.output, compressedImage: compressed };
}
