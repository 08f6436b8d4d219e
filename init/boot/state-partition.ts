// state-partition: the filesystem labelled STATE, where the machine config persists
// across boots (the disk image makes it; tests make one with mke2fs -L STATE). PID 1
// mounts it before the engine starts; without one the config is held in memory only.
import { mkdirSync } from 'node:fs';
import type { Native } from '../../native/index.ts';
import { listBlockDevices } from '../sys/sysfs-block.ts';
import { MS } from '../sys/mount-table.ts';

export const STATE_LABEL = 'STATE';
export const STATE_MOUNT = '/system/state';
const WRITABLE = new Set(['ext4', 'ext3', 'ext2', 'vfat']);

export type StateMount = { dir: string; device: string; why?: undefined } | { dir?: undefined; why: string };

export function mountStatePartition(n: Native, sys = '/sys/class/block', dev = '/dev'): StateMount {
  const found = [...listBlockDevices(sys, dev).values()].filter((d) => d.label === STATE_LABEL);
  if (!found.length) return { why: `no filesystem labelled ${STATE_LABEL}` };
  if (found.length > 1) {
    return { why: `${found.length} filesystems labelled ${STATE_LABEL} (${found.map((d) => d.devPath).join(', ')}): `
      + 'refusing to guess' };
  }
  const d = found[0]!;
  if (!d.fstype || !WRITABLE.has(d.fstype)) return { why: `${d.devPath} (${STATE_LABEL}) holds ${d.fstype ?? 'no'} `
    + `filesystem; it must be one of ${[...WRITABLE].join(', ')}` };
  if (d.readOnly) return { why: `${d.devPath} (${STATE_LABEL}) is read-only` };
  mkdirSync(STATE_MOUNT, { recursive: true, mode: 0o700 });
  try {
    n.mount(d.devPath, STATE_MOUNT, d.fstype, MS.NOSUID | MS.NODEV | MS.NOEXEC | MS.NOATIME);
  } catch (e) {
    return { why: `cannot mount ${d.devPath} (${STATE_LABEL}) on ${STATE_MOUNT}: ${(e as Error).message}` };
  }
  return { dir: STATE_MOUNT, device: d.devPath };
}
