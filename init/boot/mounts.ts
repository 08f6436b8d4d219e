// mounts: the pseudo filesystems PID 1 mounts at boot, and unmount-all at shutdown.
import { mkdirSync, readFileSync } from 'node:fs';
import type { Native } from '../../native/index.ts';
import type { Logger } from '../../machinery/log.ts';

import { isErrno } from '../../native/errno.ts';
import { MNT_DETACH, MS, parseMounts, type ProcMount } from '../../machinery/sys/mount-table.ts';
import { SYSTEM_IMAGE_MOUNT } from '../../machinery/disk/labels.ts';

export interface MountEntry {
  target: string; fstype: string; source: string; flags: number; data?: string; mode?: number;
}

const { NOSUID, NODEV, NOEXEC } = MS;
/** Order matters: parents before children (/dev before /dev/pts, /sys before /sys/fs/cgroup). */
export const EARLY_MOUNTS: readonly MountEntry[] = [
  { target: '/proc', fstype: 'proc', source: 'proc', flags: NOSUID | NODEV | NOEXEC },
  { target: '/sys', fstype: 'sysfs', source: 'sysfs', flags: NOSUID | NODEV | NOEXEC },
  { target: '/dev', fstype: 'devtmpfs', source: 'devtmpfs', flags: NOSUID, data: 'mode=0755' },
  {
    target: '/dev/pts', fstype: 'devpts', source: 'devpts', flags: NOSUID | NOEXEC,
    data: 'gid=5,mode=0620,ptmxmode=0666',
  },
  { target: '/dev/shm', fstype: 'tmpfs', source: 'shm', flags: NOSUID | NODEV, data: 'mode=1777' },
  { target: '/run', fstype: 'tmpfs', source: 'run', flags: NOSUID | NODEV, data: 'mode=0755' },
  { target: '/tmp', fstype: 'tmpfs', source: 'tmp', flags: NOSUID | NODEV, data: 'mode=1777' },
  {
    target: '/sys/fs/cgroup', fstype: 'cgroup2', source: 'cgroup2', flags: NOSUID | NODEV | NOEXEC,
    data: 'nsdelegate',
  },
  { target: '/sys/fs/bpf', fstype: 'bpf', source: 'bpffs', flags: NOSUID | NODEV | NOEXEC, data: 'mode=0700' },
];

function readMounts(): ProcMount[] {
  try {
    return parseMounts(readFileSync('/proc/self/mounts', 'utf8'));
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return []; // before /proc exists: nothing mounted yet
    throw e;
  }
}

export function mountEarly(n: Native, log: Logger, table: readonly MountEntry[] = EARLY_MOUNTS): number {
  let mounted = 0;
  for (const m of table) {
    if (readMounts().some((p) => p.target === m.target)) {
      log.info(`${m.target} already mounted`);
      continue;
    }
    mkdirSync(m.target, { recursive: true });
    n.mount(m.source, m.target, m.fstype, m.flags, m.data);
    mounted++;
  }
  // Shared propagation from the root down, as systemd does: a plugin in a mount namespace of its
  // own (a slave) then sees what the storage plugin mounts later (/var, MountSpecs).
  n.mount('none', '/', '', MS.REC | MS.SHARED);
  return mounted;
}

/**
 * Unmounts everything but the root and the system image, deepest first; a busy one is detached. Returns what
 * stayed. The system image is read-only and holds the executable this process runs: it goes with the root.
 * A busy filesystem with no disk behind it (/dev holds PID 1's console) loses nothing when detached: said as
 * a fact; a busy one on a disk is a warning (a writer still had it open).
 */
export function unmountAll(n: Native, log: Logger): { unmounted: number; failed: string[] } {
  const mounts = readMounts().filter((m) => m.target !== '/' && m.target !== SYSTEM_IMAGE_MOUNT).reverse();
  let unmounted = 0;
  const failed: string[] = [];
  for (const { target: t, source } of mounts) {
    try {
      n.umount2(t);
      unmounted++;
    } catch (e) {
      try {
        n.umount2(t, MNT_DETACH);
        unmounted++;
        const said = `${t} busy (${(e as Error).message}); detached`;
        if (source.startsWith('/dev/')) log.warn(said);
        else log.info(said);
      } catch (e2) {
        failed.push(t);
        log.error(`cannot unmount ${t}: ${(e2 as Error).message}`);
      }
    }
  }
  return { unmounted, failed };
}
