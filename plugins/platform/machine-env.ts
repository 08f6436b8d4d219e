// machine-env: the SourceEnv of a real machine: SMBIOS strings from /sys/class/dmi/id,
// filesystems by label from sysfs (superblocks read, nothing mounted), seed volumes
// mounted read-only (nosuid, nodev, noexec) only while their files are read.
import { existsSync, mkdtempSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isErrno } from '../../native/errno.ts';
import type { Native } from '../../native/index.ts';
import { MS } from '../../machinery/sys/mount-table.ts';
import { listBlockDevices } from '../../machinery/sys/sysfs-block.ts';
import { httpRequest } from '../../machinery/sys/http-get.ts';
import type { Dmi, SourceEnv, Volume } from './sources/source.ts';

/** The most a seed file may hold. */
export const MAX_SEED_FILE_BYTES = 1 << 20;

export function readOptional(path: string, max = MAX_SEED_FILE_BYTES): Buffer | undefined {
  try {
    if (statSync(path).size > max) throw new Error(`${path}: larger than ${max} bytes`);
    return readFileSync(path);
  } catch (e) {
    if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) return undefined;
    throw e;
  }
}

export function readDmi(dir = '/sys/class/dmi/id'): Dmi {
  const s = (f: string) => {
    try {
      return readFileSync(join(dir, f), 'utf8').trim();
    } catch {
      return '';
    }
  };
  return {
    uuid: s('product_uuid').toLowerCase(), serial: s('product_serial'), sysVendor: s('sys_vendor'),
    productName: s('product_name'), biosVendor: s('bios_vendor'),
  };
}

export function machineVolumes(): Volume[] {
  return [...listBlockDevices().values()]
    .filter((d) => d.label && (d.fstype === 'vfat' || d.fstype === 'iso9660'))
    .map((d) => ({ devPath: d.devPath, label: d.label!, fstype: d.fstype! }));
}

export async function readVolumeFiles(
  n: Native, v: Volume, files: readonly string[],
): Promise<Map<string, Buffer | undefined>> {
  const dir = mkdtempSync('/run/platform-seed-');
  try {
    // Off the event loop: PID 1 reads a seed too (Plugin.lookForConfig), and a CD-ROM may take seconds.
    await n.mountAsync(v.devPath, dir, v.fstype, MS.RDONLY | MS.NOSUID | MS.NODEV | MS.NOEXEC);
    try {
      return new Map(files.map((f) => [f, readOptional(join(dir, f))]));
    } finally {
      await n.umount2Async(dir);
    }
  } finally {
    rmdirSync(dir);
  }
}

/** One pass's view of the machine: the volumes are read once per pass, however often sources ask. */
export function machineEnv(n: () => Native, params: Record<string, string>, mac: string): SourceEnv {
  let volumes: Volume[] | undefined;
  return {
    params, dmi: readDmi(), mac, hostname: hostname(),
    volumes: () => (volumes ??= machineVolumes()),
    readVolume: (v, files) => readVolumeFiles(n(), v, files),
    readFile: (p) => readOptional(p),
    exists: (p) => existsSync(p),
    http: httpRequest,
  };
}
