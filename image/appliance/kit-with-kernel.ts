// kit-with-kernel: the system kit with an appliance's own kernel (the system's config with the definition's
// kernel.fragment on top, compiled by scripts/kernel.ts): its bzImage, and the system image made again with that
// kernel's modules in place of the system's (everything else as it was: PID 1, the addon, their libraries).
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { keyed } from '../build-cache.ts';
import { sha256 } from '../hash.ts';
import { scanModules } from '../modules-dep.ts';
import {
  MODULES_DIR, moduleEntries, readSystemImage, SYSTEM_IMAGE_FILE, SYSTEM_IMAGE_RECIPE, writeSystemImage,
} from '../system-image.ts';
import { sortEntries } from '../cpio.ts';
import { describeKitFile, type OpenedKit } from './system-kit.ts';

/** A kernel build: what scripts/kernel.ts leaves in its cache. */
export interface KernelBuild {
  key: string;
  bzImage: string;
  /** Its whole .config. */
  config: string;
  /** The installed modules, `<modules>/<release>/kernel/...`. */
  modules: string;
  release: string;
}

/** What an appliance's kernel is made of: the system's kernel and config, with the appliance's fragment on top. */
export interface KernelFragmentRequest {
  /** The system kernel's cache key (its kept object tree) and whole .config. */
  base: { key: string; config: string };
  /** The fragment the system's kernel is made from: the options it relies on, which the appliance may not undo. */
  systemFragment: string;
  /** The appliance's fragment, and its file as errors name it. */
  fragment: string;
  fragmentFile: string;
  progress(message: string): void;
}

/** Compiles (or finds cached) the kernel of a request; throws KernelConfigRefused when its settings did not hold. */
export type KernelBuilder = (request: KernelFragmentRequest) => Promise<KernelBuild>;

/** The names of the modules a kernel build ships. */
export const kernelModules = (kernel: KernelBuild) =>
  scanModules(join(kernel.modules, kernel.release)).map((m) => m.name).sort();

export interface KitWithKernelOptions {
  /** Where the system image is written, and the key of the last one kept. */
  dir: string;
  /** The system image's time stamps. */
  epoch: number;
  progress(message: string): void;
}

/** `kit` with `kernel` in place of its own: the system image is written again only when its inputs changed. */
export async function kitWithKernel(kit: OpenedKit, kernel: KernelBuild, o: KitWithKernelOptions): Promise<OpenedKit> {
  mkdirSync(o.dir, { recursive: true });
  const systemImage = join(o.dir, SYSTEM_IMAGE_FILE);
  const key = sha256(SYSTEM_IMAGE_RECIPE, kit.files.systemImage.sha256, kernel.key, JSON.stringify(kit.compression),
    String(o.epoch));
  const written = await keyed(o.dir, 'system-image', key, [systemImage], async () => {
    const kept = readSystemImage(kit.paths.systemImage).filter((e) => !e.path.startsWith(`${MODULES_DIR}/`));
    const entries = sortEntries([...kept, ...moduleEntries({ dir: kernel.modules, release: kernel.release })]);
    o.progress(`system image: ${entries.length} files, the modules of kernel ${kernel.key} in place of the system's `
      + '(about half a minute)');
    writeSystemImage(entries, systemImage, o.epoch, kit.compression);
  });
  if (written) o.progress(`system image: ${(statSync(systemImage).size / 1e6).toFixed(1)} MB`);
  return {
    ...kit,
    modules: kernelModules(kernel),
    kernel: { ...kit.kernel, key: kernel.key, release: kernel.release },
    files: {
      ...kit.files,
      vmlinuz: await describeKitFile(kit.dir, kernel.bzImage),
      systemImage: await describeKitFile(kit.dir, systemImage),
      kernelConfig: await describeKitFile(kit.dir, kernel.config),
    },
    paths: { ...kit.paths, vmlinuz: kernel.bzImage, systemImage, kernelConfig: kernel.config },
  };
}
