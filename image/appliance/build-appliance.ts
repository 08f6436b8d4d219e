// build-appliance: an appliance definition (definition.ts) made into images. Its extensions are built (each
// skipped when its inputs did not change), the payload the system carries beside its kernel is written (the index,
// the first-boot config with the secrets file, each extension's image: machinery/disk/slot-payload.ts), and the
// chosen formats are built from the system kit's kernel and an initramfs made from the kit that trusts the
// appliance's signing key (system-kit.ts), with that payload (images.ts). Images are made in
// a folder of their own inside the output folder and moved into it only once all are whole: a build that fails
// leaves the output folder as it was. A build whose inputs are the last one's does nothing and says so.
import { createHash, createPublicKey } from 'node:crypto';
import {
  existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import {
  encodePayload, extensionFile, PAYLOAD_CONFIG, PAYLOAD_INDEX, type SlotPayload,
} from '../../machinery/disk/slot-payload.ts';
import { keyed } from '../build-cache.ts';
import { sha256File } from '../hash.ts';
import { DISK_INITRAMFS, DISK_SYSTEM_IMAGE } from '../system-image.ts';
import type { OutputFormat, SigningKey } from '../formats/format.ts';
import { buildImages, type ImageArtifact } from '../images.ts';
import type { ApplianceDefinition } from './definition.ts';
import { buildExtension, type BuiltExtension } from './extension-build.ts';
import { kitDiskForm, kitInitramfs, type OpenedKit } from './system-kit.ts';
import { kernelModules, kitWithKernel, type KernelBuild, type KernelBuilder } from './kit-with-kernel.ts';
import { fragmentProblems, KernelConfigRefused } from '../kernel-config.ts';

/** A definition the system cannot build: each reason, with its field. */
export class ApplianceRefused extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`${file}: refused: ${problems.join('; ')}`);
    this.name = 'ApplianceRefused';
  }
}

/** A module's name as the kernel compares them: - and _ are the same. */
const moduleKey = (name: string) => name.replace(/-/g, '_');

/** Where an appliance build keeps what it reuses (built extensions, the last build's key), in its output folder. */
export const BUILD_CACHE_DIR = '.build';

export interface ApplianceBuildOptions {
  definition: ApplianceDefinition;
  /** The system the appliance runs on: its initramfs is made from it, trusting the signing key below. */
  system: OpenedKit;
  /** Compiles the appliance's kernel when the definition has a kernel.fragment (scripts/kernel.ts). */
  kernelBuilder?: KernelBuilder;
  signingKey(): SigningKey;
  formats: readonly OutputFormat[];
  /** The project's output folder: the images go here. */
  outDir: string;
  /** Seeds the disks' GUIDs and ids (default: the appliance's name and version). */
  seed?: string;
  /** The raw disk's size in MiB (default: what it needs). */
  sizeMiB?: number;
  /** The whole command line, instead of the system's and the definition's kernel args. */
  cmdline?: string;
  epoch: number;
  progress(message: string): void;
}

export interface ApplianceBuild {
  /** false: the inputs were the last build's, whose images are there; nothing was done. */
  built: boolean;
  extensions: BuiltExtension[];
  artifacts: ImageArtifact[];
  cmdline: string;
}

/** The command line the appliance boots with: the system's, then the definition's kernel args. */
export const applianceCmdline = (system: string, args: readonly string[]) => [system.trim(), ...args].join(' ').trim();

/**
 * The appliance's own kernel, when its definition has a fragment: refused before any build when a line is not a
 * setting or changes one of the system's, and when its settings did not hold once configured. Nothing is written in
 * the output folder: the kernel is kept in the kernel cache.
 */
async function fragmentKernel(o: ApplianceBuildOptions, fragmentFile: string): Promise<KernelBuild> {
  const d = o.definition;
  const shown = relative(dirname(d.file), fragmentFile);
  const refused = (problems: string[]) => new ApplianceRefused(d.file, problems.map((p) => `kernel.fragment: ${shown}: `
    + p));
  const fragment = readFileSync(fragmentFile, 'utf8');
  const systemFragment = readFileSync(o.system.paths.kernelFragment, 'utf8');
  const problems = fragmentProblems(fragment, systemFragment);
  if (problems.length) throw refused(problems);
  if (!o.kernelBuilder) throw refused(['this build of the appliance command cannot compile kernels']);
  try {
    return await o.kernelBuilder({
      base: { key: o.system.kernel.key, config: readFileSync(o.system.paths.kernelConfig, 'utf8') },
      systemFragment, fragment, fragmentFile: shown, progress: o.progress,
    });
  } catch (e) {
    if (e instanceof KernelConfigRefused) throw refused(e.problems);
    throw e;
  }
}

export async function buildAppliance(o: ApplianceBuildOptions): Promise<ApplianceBuild> {
  const d = o.definition;
  const kernel = d.kernel.fragment ? await fragmentKernel(o, d.kernel.fragment) : undefined;
  // Checked before anything is written: a module loaded at boot must be one the appliance's kernel build ships.
  const modules = kernel ? kernelModules(kernel) : o.system.modules;
  const whose = kernel ? 'the appliance\'s kernel (with its fragment)' : 'the system\'s kernel';
  const shipped = new Set(modules.map(moduleKey));
  const unknown = d.kernel.modules.filter((m) => !shipped.has(moduleKey(m)));
  if (unknown.length) {
    throw new ApplianceRefused(d.file, unknown.map((m) => `kernel.modules: "${m}": not a module of ${whose} `
      + `(it ships ${modules.length}: ${modules.join(', ')})`));
  }
  const cache = join(o.outDir, BUILD_CACHE_DIR);
  mkdirSync(cache, { recursive: true });
  const system = kernel
    ? await kitWithKernel(o.system, kernel, { dir: join(cache, 'kernel'), epoch: o.epoch, progress: o.progress })
    : o.system;
  const extensions: BuiltExtension[] = [];
  for (const e of d.extensions) {
    const b = await buildExtension(e, { outDir: join(cache, 'extensions'), version: d.version, progress: o.progress,
      ...(d.registryCA ? { registryCA: d.registryCA } : {}) });
    o.progress(`extension ${e.name}: ${(b.bytes / 1e6).toFixed(1)} MB, sha256 ${b.sha256.slice(0, 12)}`
      + `${b.built ? '' : ' (unchanged)'}`);
    for (const n of b.notes) o.progress(`extension ${e.name}: ${n}`);
    extensions.push(b);
  }
  const initramfs = join(cache, 'initramfs.cpio.zst');
  if (await kitInitramfs(system, { key: o.signingKey(), mtime: o.epoch, output: initramfs, cacheDir: cache })) {
    o.progress(`initramfs: system ${system.version} (${system.commit}), trusting the appliance's signing key`
      + `${kernel ? `, kernel ${kernel.key}` : ''}`);
  }
  // The disk images' slot A reads its system image from SYSTEM-A (ARCHITECTURE.md, "The disk form"); the live images
  // (ISO, PXE) carry the self-contained initramfs, the upgrade bundle both forms.
  const diskForm = await kitDiskForm(system, {
    key: o.signingKey(), mtime: o.epoch, output: join(cache, DISK_INITRAMFS), image: join(cache, DISK_SYSTEM_IMAGE),
    cacheDir: cache,
  });
  const cmdline = o.cmdline?.trim() ?? applianceCmdline(system.cmdline, d.kernel.args);
  const config = d.config.text.trim() ? d.config.text : '';
  // An appliance with nothing to carry (the system's own image) gets no payload: its images are the system's.
  const carries = config.length > 0 || extensions.length > 0 || d.kernel.modules.length > 0;
  const index: SlotPayload = {
    name: d.name, version: d.version, config: config.length > 0,
    extensions: extensions.map((e) => ({ name: e.name, sha256: e.sha256, bytes: e.bytes,
      ...(e.manifest.devices.length ? { devices: e.manifest.devices } : {}) })),
    ...(d.kernel.modules.length ? { modules: d.kernel.modules } : {}),
  };
  const key = createHash('sha256').update(JSON.stringify({
    index, carries, config, cmdline, formats: o.formats.map((f) => f.name), seed: o.seed, epoch: o.epoch,
    sizeMiB: o.sizeMiB,
    kernel: system.files.vmlinuz.sha256, initramfs: await sha256File(initramfs),
    diskInitramfs: await sha256File(diskForm.initramfs),
    signer: createPublicKey(o.signingKey().privateKey).export({ type: 'spki', format: 'der' }).toString('hex'),
  })).digest('hex');
  const manifest = join(o.outDir, 'manifest.json');
  let artifacts: ImageArtifact[] = [];
  const built = await keyed(cache, 'images', key, [manifest], async () => {
    rmSync(join(cache, 'images.key'), { force: true });
    const work = mkdtempSync(join(cache, 'payload-'));
    const partial = mkdtempSync(join(o.outDir, '.partial-'));
    try {
      writeFileSync(join(work, PAYLOAD_INDEX), encodePayload(index));
      if (index.config) writeFileSync(join(work, PAYLOAD_CONFIG), config);
      for (const e of extensions) linkSync(e.path, join(work, extensionFile(e.name)));
      artifacts = await buildImages({
        formats: o.formats,
        inputs: { kernel: system.paths.vmlinuz, initramfs, cmdline, diskForm, ...(carries ? { payload: work } : {}) },
        ...(o.sizeMiB ? { sizeMiB: o.sizeMiB } : {}),
        release: { version: d.version, commit: system.commit }, signingKey: o.signingKey, outDir: partial,
        seed: o.seed ?? `${d.name}@${d.version}`, epoch: o.epoch, progress: o.progress,
      });
      // Whole: each into its place (pxe/ is a folder of its own), the manifest last.
      for (const name of readdirSync(partial).filter((n) => n !== 'manifest.json')) {
        rmSync(join(o.outDir, name), { recursive: true, force: true });
        renameSync(join(partial, name), join(o.outDir, name));
      }
      renameSync(join(partial, 'manifest.json'), manifest);
    } finally {
      rmSync(work, { recursive: true, force: true });
      rmSync(partial, { recursive: true, force: true });
    }
  });
  if (!built) {
    artifacts = (JSON.parse(readFileSync(manifest, 'utf8')) as { images: ImageArtifact[] }).images;
    const missing = artifacts.filter((a) => !existsSync(join(o.outDir, a.file)));
    if (missing.length) {
      // Removed by hand since: built again.
      rmSync(join(cache, 'images.key'), { force: true });
      return buildAppliance(o);
    }
  }
  return { built, extensions, artifacts, cmdline };
}
