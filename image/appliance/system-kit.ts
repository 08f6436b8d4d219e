// system-kit: the system an appliance runs on, as built parts: the kernel, the system image (PID 1's executable,
// the addon, the plugins, the kernel's modules) and stage0, each with its sha256, listed in system-kit.json. The
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
import type { SigningKey } from '../formats/format.ts';
import { sha256, sha256File } from '../hash.ts';
import { INITRAMFS_ZSTD_LEVEL, initramfsEntries, writeCompressed } from '../initramfs.ts';

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
  files: { vmlinuz: KitFile; systemImage: KitFile; stage0: KitFile };
}

/** A kit whose files were found whole: each part's path. */
export interface OpenedKit extends SystemKit {
  dir: string;
  paths: { vmlinuz: string; systemImage: string; stage0: string };
}

export class SystemKitError extends Error {
  constructor(readonly kitDir: string, message: string, options?: ErrorOptions) {
    super(`system kit ${kitDir}: ${message}`, options);
    this.name = 'SystemKitError';
  }
}

/** Writes `dir`/system-kit.json describing the parts (kept where they are; paths relative to `dir`). */
export async function writeSystemKit(dir: string, k: Omit<SystemKit, 'files'> & {
  paths: OpenedKit['paths'];
}): Promise<string> {
  const describe = async (p: string): Promise<KitFile> => ({
    file: relative(dir, p), size: statSync(p).size, sha256: await sha256File(p),
  });
  const kit: SystemKit = {
    version: k.version, commit: k.commit, cmdline: k.cmdline.trim(), topLevelDirs: k.topLevelDirs,
    modules: [...k.modules].sort(),
    files: {
      vmlinuz: await describe(k.paths.vmlinuz), systemImage: await describe(k.paths.systemImage),
      stage0: await describe(k.paths.stage0),
    },
  };
  const file = join(dir, SYSTEM_KIT_FILE);
  // Whole or not at all: a build beside this one may be reading it.
  writeFileAtomic(file, JSON.stringify(kit, null, 2) + '\n', 0o644);
  return file;
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
  const paths = {} as OpenedKit['paths'];
  for (const name of ['vmlinuz', 'systemImage', 'stage0'] as const) {
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

/** The kit's initramfs trusting `key`, written to `output` unless the same one is there; true when written. */
export function kitInitramfs(kit: OpenedKit, o: KitInitramfsOptions): Promise<boolean> {
  const entries = initramfsEntries({
    stage0: kit.paths.stage0, systemImage: { file: kit.paths.systemImage, topLevelDirs: kit.topLevelDirs },
    mtime: o.mtime, files: [trustedKeyFile(o.key), ...o.files ?? []],
  });
  const key = sha256(String(INITRAMFS_ZSTD_LEVEL), entriesKey(entries));
  return keyed(o.cacheDir, 'initramfs', key, [o.output], () => writeCompressed(entries, o.output,
    INITRAMFS_ZSTD_LEVEL));
}
