// payload-source: where an install reads this build's disk from. The ISO the machine booted
// from (found as the iso9660 filesystem holding install/install.json, mounted read-only while
// it is read), or the install/ folder beside the PXE files, over HTTP. Either way the manifest
// is read and checked first; the disk itself streams when the writer asks for it.
import { createReadStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { isErrno } from '../../native/errno.ts';
import type { BlockDeviceSpec } from '../../proto/gen/spec-types.ts';
import {
  INSTALL_DIR, INSTALL_MANIFEST, MAX_INSTALL_MANIFEST_BYTES, parseInstallManifest, type InstallManifest,
} from '../../machinery/disk/install-manifest.ts';
import { MNT_DETACH, MS } from '../../machinery/sys/mount-table.ts';
import { httpOpen, httpRequest } from '../../machinery/sys/http-get.ts';

export interface PayloadSource {
  /** Where the payload is read from: the medium's device (/dev/sr0) or the folder's URL. */
  readonly origin: string;
  /** The medium's device, which is never a target. */
  readonly device?: string;
  readonly manifest: InstallManifest;
  /** The compressed disk, from its first byte. */
  openDisk(): Promise<Readable>;
  /** Lets go of the medium (unmounts it). */
  close(): Promise<void>;
}

/** mount(2) and umount2(2), off PID 1's thread (the addon's async calls): it serves the API while they wait. */
export interface MountOps {
  mount(source: string, target: string, fstype: string, flags: number, data?: string): Promise<void>;
  umount2(target: string, flags?: number): Promise<void>;
}

/** The payload on the boot medium: the first iso9660 filesystem (whole disks first) holding install/install.json. */
export async function findMedium(
  ops: MountOps, devices: readonly BlockDeviceSpec[], mountDir: string,
): Promise<PayloadSource | Error> {
  const isos = devices.filter((d) => d.fstype === 'iso9660').sort((a, b) => Number(a.partition) - Number(b.partition));
  const looked: string[] = [];
  mkdirSync(mountDir, { recursive: true, mode: 0o700 });
  for (const d of isos) {
    try {
      await ops.mount(d.devPath, mountDir, 'iso9660', MS.RDONLY | MS.NOSUID | MS.NODEV | MS.NOEXEC);
    } catch (e) {
      looked.push(`${d.devPath}: cannot mount: ${(e as Error).message}`);
      continue;
    }
    const manifestPath = join(mountDir, INSTALL_DIR, INSTALL_MANIFEST);
    let manifest: InstallManifest | Error | undefined;
    try {
      manifest = parseInstallManifest(readFileSync(manifestPath, 'utf8'), `${d.devPath}:/${INSTALL_DIR}/`
      + INSTALL_MANIFEST);
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) manifest = new Error(`${d.devPath}: ${(e as Error).message}`, { cause: e });
    }
    if (manifest && !(manifest instanceof Error)) {
      const m = manifest;
      return {
        origin: d.devPath, device: d.devPath, manifest: m,
        openDisk: () => Promise.resolve(createReadStream(join(mountDir, INSTALL_DIR, m.disk.file))),
        close: () => ops.umount2(mountDir, MNT_DETACH),
      };
    }
    await ops.umount2(mountDir, MNT_DETACH);
    looked.push(manifest ? manifest.message : `${d.devPath}: no /${INSTALL_DIR}/${INSTALL_MANIFEST}`);
  }
  return new Error('no install medium: '
    + (looked.length ? `looked at ${looked.join('; ')}` : 'no iso9660 filesystem on any device')
    + '; a machine booted over the network names the install folder\'s URL in source');
}

/** The payload in the install/ folder at `url` (its install.json may be named instead of the folder). */
export async function fetchPayload(url: string): Promise<PayloadSource | Error> {
  const base = url.endsWith(`/${INSTALL_MANIFEST}`) ? url.slice(0, -INSTALL_MANIFEST.length)
    : url.endsWith('/') ? url : `${url}/`;
  const manifestUrl = new URL(INSTALL_MANIFEST, base).href;
  const got = await httpRequest({ url: manifestUrl, maxBytes: MAX_INSTALL_MANIFEST_BYTES, timeoutMs: 30_000 });
  if (!got.ok) return new Error(`GET ${got.message}`);
  if (got.status !== 200) return new Error(`GET ${manifestUrl}: HTTP ${got.status}`);
  const manifest = parseInstallManifest(got.body.toString('utf8'), manifestUrl);
  if (manifest instanceof Error) return manifest;
  const m = manifest;
  const diskUrl = new URL(m.disk.file, base).href;
  return {
    origin: base, manifest: m,
    async openDisk() {
      const res = await httpOpen(diskUrl).catch((e: Error) => {
        throw new Error(`GET ${e.message}`, { cause: e });
      });
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared !== m.disk.compressedSize) {
        res.destroy();
        throw new Error(`GET ${diskUrl}: ${declared} bytes announced; the manifest says ${m.disk.compressedSize}`);
      }
      return res;
    },
    close: () => Promise.resolve(),
  };
}
