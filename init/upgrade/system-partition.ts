// system-partition: where an upgrade writes a slot's system image on a disk made with the disk form
// (image/disk/raw.ts): the GPT partition named SYSTEM-A or SYSTEM-B on the disk that holds the booted ESP. A disk made
// before the disk form has none, and its slots take self-contained systems.
import { basename } from 'node:path';
import type { Slot } from '../../machinery/disk/boot-slots.ts';
import { systemLabel } from '../../machinery/disk/labels.ts';
import { listBlockDevices, partitionName } from '../../machinery/sys/sysfs-block.ts';

export interface SystemPartition { devPath: string; sizeBytes: number }

/** `slot`'s SYSTEM partition on the disk that holds `espDevice`; undefined when that disk has none. */
export function findSystemPartition(
  espDevice: string, slot: Slot, sys = '/sys/class/block', dev = '/dev',
): SystemPartition | undefined {
  const devices = [...listBlockDevices(sys, dev).values()];
  const disk = devices.find((d) => d.devPath === espDevice)?.parent;
  if (!disk) throw new Error(`${espDevice} (the ESP) is not a partition this system lists`);
  const label = systemLabel(slot);
  const found = devices.filter((d) => d.parent === disk && partitionName(sys, basename(d.devPath)) === label);
  if (found.length > 1) throw new Error(`${found.length} partitions named ${label} on ${disk}: refusing to guess`);
  const p = found[0];
  if (p?.readOnly) throw new Error(`${p.devPath} (${label}) is read-only`);
  return p ? { devPath: p.devPath, sizeBytes: p.sizeBytes } : undefined;
}
