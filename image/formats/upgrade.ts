// upgrade: the file an upgrade consumes (machinery/disk/upgrade-bundle.ts): the kernel and initramfs, the disk form's
// initramfs and image (what a disk with SYSTEM partitions takes: boot-slots.ts, DISK_FORM_PARTS), and the appliance's
// payload when it has one, with a manifest of their sizes and sha256, signed with Ed25519. The signing key's public
// half is written beside it: a machine that trusts that key accepts the bundle.
import { createPublicKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeUpgradeBundle } from '../../machinery/disk/upgrade-bundle.ts';
import { decodePayload, PAYLOAD_INDEX, payloadFiles } from '../../machinery/disk/slot-payload.ts';
import { DISK_FORM_PARTS, SLOT_FILES } from '../../machinery/disk/boot-slots.ts';
import type { FormatContext, OutputFormat } from './format.ts';

export const UPGRADE_BUNDLE = 'appliance-upgrade.tar';
export const UPGRADE_SELF_CONTAINED_BUNDLE = 'appliance-upgrade-self-contained.tar';
export const UPGRADE_PUBLIC_KEY = 'appliance-upgrade.pub';

/** The payload's files as parts, the index first; none without a payload. */
function payloadParts(dir: string | undefined): { name: string; data: Buffer }[] {
  if (!dir) return [];
  const index = decodePayload(readFileSync(join(dir, PAYLOAD_INDEX)), join(dir, PAYLOAD_INDEX));
  if (index instanceof Error) throw index;
  return payloadFiles(index).map((name) => ({ name, data: readFileSync(join(dir, name)) }));
}

/** The bundle's parts: the system's kernel and initramfs, its disk form's when it has one, the appliance's payload. */
function bundleParts(ctx: FormatContext, diskForm: boolean): { name: string; data: Buffer }[] {
  const disk = diskForm ? ctx.inputs.diskForm : undefined;
  return [
    { name: SLOT_FILES.kernel, data: readFileSync(ctx.inputs.kernel) },
    { name: SLOT_FILES.initramfs, data: readFileSync(ctx.inputs.initramfs) },
    ...(disk ? [
      { name: DISK_FORM_PARTS.initramfs, data: readFileSync(disk.initramfs) },
      { name: DISK_FORM_PARTS.image, data: readFileSync(disk.compressedImage) },
    ] : []),
    // The appliance's extensions and first config go with the system they were built for.
    ...payloadParts(ctx.inputs.payload),
  ];
}

/** A format writing the bundle `file`, with the disk form's parts or without. */
function bundleFormat(name: string, file: string, diskForm: boolean, summary: string): OutputFormat {
  return {
    name, summary,
    build(ctx) {
      const key = ctx.signingKey();
      const bundle = join(ctx.outDir, file);
      writeFileSync(bundle, encodeUpgradeBundle({
        version: ctx.release.version, commit: ctx.release.commit, cmdline: ctx.inputs.cmdline, mtime: ctx.epoch,
        privateKey: key.privateKey, parts: bundleParts(ctx, diskForm),
      }));
      const pub = join(ctx.outDir, UPGRADE_PUBLIC_KEY);
      writeFileSync(pub, createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' }));
      ctx.progress(`${name}: signed with ${key.description}`);
      return [bundle, pub];
    },
  };
}

export const upgrade = bundleFormat('upgrade', UPGRADE_BUNDLE, true, 'the signed upgrade bundle (kernel, '
  + 'initramfs, the disk form\'s image, manifest, Ed25519 signature) and its public key');

/**
 * For machines running a build from before disk-form upgrades: they refuse the disk form's parts by name. Each
 * machine takes it into its slot as a self-contained system (the image in its initramfs, held in RAM).
 */
export const upgradeSelfContained = bundleFormat('upgrade-self-contained', UPGRADE_SELF_CONTAINED_BUNDLE, false,
  'the upgrade bundle without the disk form\'s parts, for machines built before disk-form upgrades');
