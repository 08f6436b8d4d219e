// images: builds the chosen output formats from the boot artifacts, the raw disk once for
// all that wrap it, and lists each artifact (format, file, size, sha256) in a manifest.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildInstallPayload, type InstallPayload } from './disk/install-payload.ts';
import { buildRawDisk, type RawDisk } from './disk/raw.ts';
import type { BootArtifacts, FormatContext, OutputFormat, SigningKey } from './formats/format.ts';
import { describeArtifact, type ArtifactInfo } from './manifest.ts';
import { liveInitramfs } from './live-initramfs.ts';

export interface ImagesOptions {
  formats: readonly OutputFormat[];
  inputs: BootArtifacts;
  release: { version: string; commit: string };
  /** Reads (or makes) the upgrade signing key; asked only when a format signs. */
  signingKey(): SigningKey;
  outDir: string;
  seed: string;
  epoch: number;
  /** Raw disk size in MiB (default: what it needs, rounded up to 64 MiB). */
  sizeMiB?: number;
  progress(message: string): void;
}

export interface ImageArtifact extends ArtifactInfo { format: string }

export async function buildImages(o: ImagesOptions): Promise<ImageArtifact[]> {
  mkdirSync(o.outDir, { recursive: true });
  const workDir = mkdtempSync(join(tmpdir(), 'appliance-images-'));
  let raw: RawDisk | undefined;
  let payload: Promise<InstallPayload> | undefined;
  let live: Promise<string> | undefined;
  let key: SigningKey | undefined;
  const ctx: FormatContext = {
    signingKey: () => (key ??= o.signingKey()),
    inputs: o.inputs, release: o.release, outDir: o.outDir, workDir, seed: o.seed, epoch: o.epoch,
    progress: o.progress,
    raw: () => {
      if (!raw) {
        o.progress(`raw disk: GPT, GRUB for BIOS and UEFI, ESP with slot A, STATE, EPHEMERAL${o.inputs.diskForm
          ? ', SYSTEM-A with its system image, SYSTEM-B' : ''}`);
        raw = buildRawDisk({
          out: join(o.outDir, 'appliance.raw'), kernel: o.inputs.kernel, initramfs: o.inputs.initramfs,
          cmdline: o.inputs.cmdline, seed: o.seed, epoch: o.epoch, workDir, release: o.release,
          ...(o.inputs.payload ? { payloadDir: o.inputs.payload } : {}),
          ...(o.inputs.diskForm ? { diskForm: o.inputs.diskForm } : {}),
          ...(o.sizeMiB ? { sizeMiB: o.sizeMiB } : {}),
        });
      }
      return raw;
    },
    liveInitramfs: () => (live ??= (async () => {
      if (!o.inputs.payload) return o.inputs.initramfs;
      const l = await liveInitramfs(o.inputs.initramfs, o.inputs.payload, join(workDir, 'live-initramfs.cpio.zst'),
        o.epoch);
      o.progress(`live initramfs: the payload adds ${(l.addedBytes / 1e6).toFixed(1)} MB to load and `
        + `${(l.unpackedBytes / 1e6).toFixed(1)} MB of RAM held for the machine's life (ISO, PXE)`);
      return l.file;
    })()),
    installPayload: () => (payload ??= (async () => {
      const disk = ctx.raw();
      o.progress('install payload: the raw disk, gzip\'d, and its manifest');
      return buildInstallPayload(disk, o.release, o.inputs.cmdline, join(workDir, 'payload'));
    })()),
  };
  const artifacts: ImageArtifact[] = [];
  const described: Record<string, Promise<ArtifactInfo>> = {};
  try {
    for (const f of o.formats) {
      const t0 = performance.now();
      o.progress(`${f.name}: ${f.summary}`);
      for (const file of await f.build(ctx)) {
        // A file two formats share (the raw disk is raw's and aws's) is hashed once.
        const info = await (described[file] ??= describeArtifact(file));
        // Relative to out/images, so that pxe/ keeps its folder.
        artifacts.push({ format: f.name, ...info, file: relative(o.outDir, file) });
        o.progress(`${f.name}: ${file} (${(info.size / 1e6).toFixed(1)} MB, ${((performance.now() - t0) / 1000)
          .toFixed(1)} s)`);
      }
    }
  } finally { rmSync(workDir, { recursive: true, force: true }); }
  const manifest = { cmdline: o.inputs.cmdline, images: artifacts };
  writeFileSync(join(o.outDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return artifacts;
}
