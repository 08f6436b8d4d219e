// sysfs-block: block devices as /sys/class/block describes them, plus their
// superblock (read from /dev). Size is in 512-byte sectors whatever the device.
import { errnoOf } from '../../native/errno.ts';
import { closeSync, existsSync, openSync, readSync, realpathSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { listDir, readOptional } from './optional-fs.ts';
import { probe, PROBE_BYTES } from './superblock.ts';
import type { BlockDeviceSpec } from '../../proto/gen/spec-types.ts';

const read = (p: string) => readOptional(p)?.trim();

type Head = Buffer | { error: string };

/**
 * Why a device's first bytes cannot be read (no medium in a CD-ROM, gone, not permitted, a failing disk). Never
 * thrown: one device that cannot be read is that device's status, and the boot goes on.
 */
function headError(e: unknown, dev: string): { error: string } {
  const code = errnoOf(e);
  if (code === 'ENOMEDIUM') return { error: 'no medium' };
  return { error: `cannot read ${dev}: ${code ?? (e instanceof Error ? e.message : String(e))}` };
}

/** The device's first bytes, or why they cannot be read. */
function readHead(dev: string): Head {
  let fd: number | undefined;
  try {
    fd = openSync(dev, 'r');
    const b = Buffer.alloc(PROBE_BYTES);
    return b.subarray(0, readSync(fd, b, 0, b.length, 0));
  } catch (e) {
    return headError(e, dev);
  } finally { if (fd !== undefined) closeSync(fd); }
}

/** readHead through the thread pool: a disk just rewritten is read from the device, for seconds under TCG. */
async function readHeadAsync(dev: string): Promise<Head> {
  let file: FileHandle | undefined;
  try {
    file = await open(dev, 'r');
    const b = Buffer.alloc(PROBE_BYTES);
    return b.subarray(0, (await file.read(b, 0, b.length, 0)).bytesRead);
  } catch (e) {
    return headError(e, dev);
  } finally { await file?.close(); }
}

/** A device as sysfs describes it, before its first bytes are probed. */
interface Described { name: string; spec: BlockDeviceSpec }

/** Devices worth reporting (not RAM disks, not unattached loop devices), from sysfs alone. */
function describeDevices(sys: string, dev: string): Described[] {
  const out: Described[] = [];
  for (const name of listDir(sys).sort()) {
    if (/^ram\d+$/.test(name)) continue;
    try {
      const d = describeDevice(sys, dev, name);
      if (d) out.push(d);
    } catch (e) {
      // Gone while listed, or sysfs refused: the device is listed with why, the others as they are.
      out.push({ name, spec: {
        devPath: join(dev, name), major: 0, minor: 0, sizeBytes: 0, partition: false, partitions: [], readOnly: false,
        removable: false, probeError: `cannot describe ${name} from ${sys}: ${(e as Error).message}`,
      } });
    }
  }
  return out;
}

/** One device as sysfs describes it; undefined for one not worth reporting (an unattached loop device). */
function describeDevice(sys: string, dev: string, name: string): Described | undefined {
  const base = join(sys, name);
  const sizeBytes = Number(read(join(base, 'size')) ?? 0) * 512;
  if (sizeBytes === 0 && /^(loop|nbd)\d+$/.test(name)) return undefined;
  const [major = 0, minor = 0] = (read(join(base, 'dev')) ?? '0:0').split(':').map(Number);
  const partition = existsSync(join(base, 'partition'));
  const parent = partition ? basename(dirname(realpathSync(base))) : undefined;
  // Whole disks only: a partition's device/ is its disk's.
  const model = partition ? undefined : read(join(base, 'device', 'model'));
  const serial = partition ? undefined : read(join(base, 'serial')) || read(join(base, 'device', 'serial'));
  return { name, spec: {
    devPath: join(dev, name), major, minor, sizeBytes, partition, partitions: [],
    ...(model ? { model } : {}), ...(serial ? { serial } : {}),
    readOnly: read(join(base, 'ro')) === '1',
    removable: read(join(parent ? join(sys, parent) : base, 'removable')) === '1',
    ...(parent ? { parent } : {}),
  } };
}

/** The devices by name, each with what its first bytes say (heads[i] is devices[i]'s), partitions listed. */
function withHeads(devices: Described[], heads: (Head | undefined)[]): Map<string, BlockDeviceSpec> {
  const out = new Map<string, BlockDeviceSpec>();
  devices.forEach(({ name, spec }, i) => {
    const head = heads[i];
    const p = Buffer.isBuffer(head) ? probe(head) : null;
    const probeError = head && !Buffer.isBuffer(head) ? head.error : undefined;
    out.set(name, { ...spec, ...(p ?? {}), ...(probeError ? { probeError } : {}) });
  });
  for (const [name, d] of out) if (d.parent) out.get(d.parent)?.partitions?.push(name);
  return out;
}

/** A partition's name in its table (GPT), as the kernel reports it in the partition's uevent. */
export function partitionName(sys: string, name: string): string | undefined {
  return /^PARTNAME=(.*)$/m.exec(readOptional(join(sys, name, 'uevent')) ?? '')?.[1];
}

/** Devices worth reporting: not RAM disks, not unattached loop devices. */
export function listBlockDevices(sys = '/sys/class/block', dev = '/dev'): Map<string, BlockDeviceSpec> {
  const devices = describeDevices(sys, dev);
  return withHeads(devices, devices.map((d) => (d.spec.sizeBytes > 0 ? readHead(d.spec.devPath) : undefined)));
}

/**
 * listBlockDevices with the devices read through the thread pool, for PID 1 while it serves the API: probing a
 * disk the installer has just rewritten took 1.5 s on its thread (TCG, 256 MiB, a busy host).
 */
export async function listBlockDevicesAsync(
  sys = '/sys/class/block', dev = '/dev',
): Promise<Map<string, BlockDeviceSpec>> {
  const devices = describeDevices(sys, dev);
  return withHeads(devices, await Promise.all(
    devices.map((d) => (d.spec.sizeBytes > 0 ? readHeadAsync(d.spec.devPath) : undefined))));
}
