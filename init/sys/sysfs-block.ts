// sysfs-block: block devices as /sys/class/block describes them, plus their
// superblock (read from /dev). Size is in 512-byte sectors whatever the device.
import { errnoOf } from '../../native/errno.ts';
import { closeSync, existsSync, openSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { listDir, readOptional } from './optional-fs.ts';
import { probe, PROBE_BYTES } from './superblock.ts';
import type { BlockDeviceSpec } from '../../proto/gen/spec-types.ts';

const read = (p: string) => readOptional(p)?.trim();

/** The device's first bytes, or why they cannot be read (no medium in a CD-ROM, gone, not permitted). */
function readHead(dev: string): Buffer | { error: string } {
  let fd: number | undefined;
  try {
    fd = openSync(dev, 'r');
    const b = Buffer.alloc(PROBE_BYTES);
    return b.subarray(0, readSync(fd, b, 0, b.length, 0));
  } catch (e) {
    const code = errnoOf(e);
    if (!code) throw e;
    return { error: code === 'ENOMEDIUM' ? 'no medium' : `cannot read ${dev}: ${code}` };
  } finally { if (fd !== undefined) closeSync(fd); }
}

/** Devices worth reporting: not RAM disks, not unattached loop devices. */
export function listBlockDevices(sys = '/sys/class/block', dev = '/dev'): Map<string, BlockDeviceSpec> {
  const out = new Map<string, BlockDeviceSpec>();
  for (const name of listDir(sys).sort()) {
    if (/^ram\d+$/.test(name)) continue;
    const base = join(sys, name);
    const sizeBytes = Number(read(join(base, 'size')) ?? 0) * 512;
    if (sizeBytes === 0 && /^(loop|nbd)\d+$/.test(name)) continue;
    const [major = 0, minor = 0] = (read(join(base, 'dev')) ?? '0:0').split(':').map(Number);
    const partition = existsSync(join(base, 'partition'));
    const parent = partition ? basename(dirname(realpathSync(base))) : undefined;
    const devPath = join(dev, name);
    const head = sizeBytes > 0 ? readHead(devPath) : undefined;
    const p = Buffer.isBuffer(head) ? probe(head) : null;
    const probeError = head && !Buffer.isBuffer(head) ? head.error : undefined;
    // Whole disks only: a partition's device/ is its disk's.
    const model = partition ? undefined : read(join(base, 'device', 'model'));
    const serial = partition ? undefined : read(join(base, 'serial')) || read(join(base, 'device', 'serial'));
    out.set(name, {
      devPath, major, minor, sizeBytes, partition, partitions: [],
      ...(model ? { model } : {}), ...(serial ? { serial } : {}),
      readOnly: read(join(base, 'ro')) === '1',
      removable: read(join(parent ? join(sys, parent) : base, 'removable')) === '1',
      ...(parent ? { parent } : {}), ...(p ?? {}), ...(probeError ? { probeError } : {}),
    });
  }
  for (const [name, d] of out) if (d.parent) out.get(d.parent)?.partitions?.push(name);
  return out;
}
