// install-payload: what a machine booted from the ISO or over PXE writes to its disk when it
// installs itself: the raw disk of this build (GPT, loaders, ESP with slot A, slot A's system image
// on SYSTEM-A, empty STATE, SYSTEM-B and EPHEMERAL), gzip'd, with a manifest saying what it is and
// how to check it. Installing is a copy: no mkfs and no loader setup on the machine; EPHEMERAL grows
// to the target disk at its first boot, as it does for a cloud disk larger than the image.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import {
  INSTALL_DIR, INSTALL_DISK, INSTALL_MANIFEST, INSTALL_PAYLOAD_KIND, type InstallManifest,
} from '../../machinery/disk/install-manifest.ts';
import { hashingStream } from '../../machinery/sys/hashing-stream.ts';
import type { RawDisk } from './raw.ts';

export {
  INSTALL_DIR, INSTALL_DISK, INSTALL_MANIFEST, type InstallManifest,
} from '../../machinery/disk/install-manifest.ts';

/** The payload's files: each one's name in install/ and where it lies now. */
export interface InstallPayload { files: { name: string; path: string }[]; manifest: InstallManifest }

/** Writes the payload for `raw` into `<dir>/install/`. */
export async function buildInstallPayload(
  raw: RawDisk, release: { version: string; commit: string }, cmdline: string, dir: string,
): Promise<InstallPayload> {
  const out = join(dir, INSTALL_DIR);
  mkdirSync(out, { recursive: true });
  const disk = join(out, INSTALL_DISK);
  const rawHash = createHash('sha256');
  const gzHash = createHash('sha256');
  // Node's gzip header carries no name and no time: the same disk gives the same bytes.
  await pipeline(createReadStream(raw.file), hashingStream(rawHash), createGzip({ level: 6 }), hashingStream(gzHash),
    createWriteStream(disk));
  const manifest: InstallManifest = {
    kind: INSTALL_PAYLOAD_KIND,
    version: release.version, commit: release.commit,
    cmdline,
    disk: {
      file: INSTALL_DISK, compression: 'gzip', size: raw.sizeBytes, sha256: rawHash.digest('hex'),
      compressedSize: statSync(disk).size, compressedSha256: gzHash.digest('hex'),
    },
    partitions: raw.gpt.partitions.map((p) => ({
      name: p.name, type: p.type, guid: p.guid, firstLba: p.firstLba, lastLba: p.lastLba,
    })),
  };
  const manifestFile = join(out, INSTALL_MANIFEST);
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n');
  return { files: [{ name: INSTALL_MANIFEST, path: manifestFile }, { name: INSTALL_DISK, path: disk }], manifest };
}
