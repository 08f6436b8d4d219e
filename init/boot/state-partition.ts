// state-partition: the disk image's labelled filesystems PID 1 mounts before the engine
// starts. STATE, where the machine config persists across boots (tests make one with
// mke2fs -L STATE; without one the config is held in memory only), and EPHEMERAL, the
// machine's data at /var (without one /var is in memory). Mounted this early so that
// nothing is written to /var, or read from STATE, before the disk is there.
import { closeSync, mkdirSync, openSync, readSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Native } from '../../native/index.ts';
import { listBlockDevices, partitionName } from '../../machinery/sys/sysfs-block.ts';
import { MS } from '../../machinery/sys/mount-table.ts';
import { extProjectQuota } from '../../machinery/sys/superblock.ts';
import { BOOT_MOUNT, EPHEMERAL_LABEL, EPHEMERAL_MOUNT, STATE_LABEL, STATE_MOUNT } from '../../machinery/disk/labels.ts';
import { ESP_LABEL } from '../../machinery/disk/boot-slots.ts';

export { STATE_LABEL, STATE_MOUNT } from '../../machinery/disk/labels.ts';
const WRITABLE = new Set(['ext4', 'ext3', 'ext2', 'vfat']);

export type LabelledMount = { dir: string; device: string; why?: undefined } | { dir?: undefined; why: string };

interface Labelled {
  label: string; target: string; flags: number; mode: number; fstypes: ReadonlySet<string>;
  /** Only a partition of the disk that holds this device. */
  sameDiskAs?: string;
  /** The mount's options for the device found (undefined: none). */
  options?: (devPath: string) => string | undefined;
}

/** Mounts the one writable filesystem labelled `label` on `target`; or says why not, and never throws. */
function mountLabelled(n: Native, l: Labelled, sys: string, dev: string): LabelledMount {
  try {
    return mountFound(n, l, sys, dev);
  } catch (e) {
    // A machine whose disks cannot be listed still boots, on memory, and says why.
    return { why: `cannot look for a filesystem labelled ${l.label}: ${(e as Error).message}` };
  }
}

function mountFound(n: Native, l: Labelled, sys: string, dev: string): LabelledMount {
  const devices = [...listBlockDevices(sys, dev).values()];
  const disk = l.sameDiskAs === undefined ? undefined : devices.find((d) => d.devPath === l.sameDiskAs)?.parent ?? '';
  const found = devices.filter((d) => d.label === l.label && (disk === undefined || d.parent === disk));
  if (!found.length) {
    // The image names its GPT partitions as it labels their filesystems: a partition named so whose filesystem has
    // no label is a damaged one, not a disk without it.
    const named = devices.find((d) => d.partition && partitionName(sys, basename(d.devPath)) === l.label
      && (disk === undefined || d.parent === disk));
    if (named) {
      const holds = named.probeError ?? (named.fstype ? `holds ${named.fstype} labelled "${named.label ?? ''}"`
        : 'holds no filesystem this system recognizes: its superblock damaged?');
      return { why: `${named.devPath} is the partition named ${l.label}, but ${holds}` };
    }
    return { why: `no filesystem labelled ${l.label}${disk ? ` on ${disk}` : ''}` };
  }
  if (found.length > 1) {
    return { why: `${found.length} filesystems labelled ${l.label} (${found.map((d) => d.devPath).join(', ')}): `
      + 'refusing to guess' };
  }
  const d = found[0]!;
  if (!d.fstype || !l.fstypes.has(d.fstype)) return { why: `${d.devPath} (${l.label}) holds ${d.fstype ?? 'no'} `
    + `filesystem; it must be one of ${[...l.fstypes].join(', ')}` };
  if (d.readOnly) return { why: `${d.devPath} (${l.label}) is read-only` };
  mkdirSync(l.target, { recursive: true, mode: l.mode });
  try {
    n.mount(d.devPath, l.target, d.fstype, l.flags, l.options?.(d.devPath));
  } catch (e) {
    return { why: `cannot mount ${d.devPath} (${l.label}) on ${l.target}: ${(e as Error).message}` };
  }
  return { dir: l.target, device: d.devPath };
}

export function mountStatePartition(n: Native, sys = '/sys/class/block', dev = '/dev'): LabelledMount {
  return mountLabelled(n, {
    label: STATE_LABEL, target: STATE_MOUNT, mode: 0o700, fstypes: WRITABLE,
    flags: MS.NOSUID | MS.NODEV | MS.NOEXEC | MS.NOATIME,
  }, sys, dev);
}

/** The first bytes of a device (a superblock's worth). */
function readHead(devPath: string, bytes = 4096): Buffer {
  const fd = openSync(devPath, 'r');
  try {
    const b = Buffer.alloc(bytes);
    return b.subarray(0, readSync(fd, b, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * EPHEMERAL on /var; the storage plugin grows it to its disk once the machine runs. Made with project quotas
 * (images since volumes came), it is mounted with prjquota, so that a volume's `size:` is enforced; an older
 * one without, and its volumes' statuses say their sizes are not enforced.
 */
export function mountEphemeralPartition(n: Native, sys = '/sys/class/block', dev = '/dev'): LabelledMount {
  return mountLabelled(n, {
    label: EPHEMERAL_LABEL, target: EPHEMERAL_MOUNT, mode: 0o755, fstypes: new Set(['ext4']),
    flags: MS.NOSUID | MS.NODEV | MS.RELATIME,
    options: (devPath) => (extProjectQuota(readHead(devPath)) ? 'prjquota' : undefined),
  }, sys, dev);
}

/**
 * The ESP of the disk STATE is on, on /system/boot: the boot slots and the loader's environment. Mounted
 * only when the loader booted a slot; nothing on it runs here (noexec).
 */
export function mountBootPartition(
  n: Native, stateDevice: string, sys = '/sys/class/block', dev = '/dev',
): LabelledMount {
  return mountLabelled(n, {
    label: ESP_LABEL, target: BOOT_MOUNT, mode: 0o700, fstypes: new Set(['vfat']), sameDiskAs: stateDevice,
    flags: MS.NOSUID | MS.NODEV | MS.NOEXEC | MS.NOATIME,
  }, sys, dev);
}
