// upgrade: the file an upgrade consumes (machinery/disk/upgrade-bundle.ts): the kernel and initramfs (and the
// appliance's payload, when it has one) with a manifest of their sizes and sha256, signed with Ed25519. The signing
// key's public half is written beside it: a machine that trusts that key accepts the bundle.
import { createPublicKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeUpgradeBundle } from '../../machinery/disk/upgrade-bundle.ts';
import { decodePayload, PAYLOAD_INDEX, payloadFiles } from '../../machinery/disk/slot-payload.ts';
import type { OutputFormat } from './format.ts';

export const UPGRADE_BUNDLE = 'appliance-upgrade.tar';
export const UPGRADE_PUBLIC_KEY = 'appliance-upgrade.pub';

/** The payload's files as parts, the index first; none without a payload. */
function payloadParts(dir: string | undefined): { name: string; data: Buffer }[] {
  if (!dir) return [];
  const index = decodePayload(readFileSync(join(dir, PAYLOAD_INDEX)), join(dir, PAYLOAD_INDEX));
  if (index instanceof Error) throw index;
  return payloadFiles(index).map((name) => ({ name, data: readFileSync(join(dir, name)) }));
}

export const upgrade: OutputFormat = {
  name: 'upgrade',
  summary: 'the signed upgrade bundle (kernel, initramfs, manifest, Ed25519 signature) and its public key',
  build(ctx) {
    const key = ctx.signingKey();
    const bundle = join(ctx.outDir, UPGRADE_BUNDLE);
    writeFileSync(bundle, encodeUpgradeBundle({
      version: ctx.release.version, commit: ctx.release.commit, cmdline: ctx.inputs.cmdline, mtime: ctx.epoch,
      privateKey: key.privateKey,
      parts: [
        { name: 'vmlinuz', data: readFileSync(ctx.inputs.kernel) },
        { name: 'initramfs.cpio.zst', data: readFileSync(ctx.inputs.initramfs) },
        // The appliance's extensions and first config go with the system they were built for.
        ...payloadParts(ctx.inputs.payload),
      ],
    }));
    const pub = join(ctx.outDir, UPGRADE_PUBLIC_KEY);
    writeFileSync(pub, createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' }));
    ctx.progress(`upgrade: signed with ${key.description}`);
    return [bundle, pub];
  },
};
