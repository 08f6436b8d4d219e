// extension-volumes: an extension's persistent directories (its manifest's `volumes`), kept on EPHEMERAL at
// /var/lib/extensions/EXTENSION/VOLUME and bound by its launcher onto the paths the manifest names. Each is owned by
// the extension's uid (stable per name: extension-uids.ts), so a reboot, an upgrade or a new image finds its files
// its own; the directory above them is root's, so the extension cannot rename or replace them. A `size:` is an ext4
// project quota: each volume has a project id of its own, kept in its directory's inode (so it needs no book), and a
// hard limit on that project's blocks. Removed only by a purge (`cosictl delete extensionspec NAME --purge-volumes`).
import { chownSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Volume } from '../../../machinery/model/extension-manifest.ts';
import type { ExtensionVolume } from '../../../machinery/model/runtime-types.ts';
import { parseMounts } from '../../../machinery/sys/mount-table.ts';
import { listDir } from '../../../machinery/sys/optional-fs.ts';
import { isErrno } from '../../../native/errno.ts';

/** Where volumes are kept: on EPHEMERAL (/var), when the machine has one. */
export const VOLUMES_DIR = '/var/lib/extensions';

/** The kernel's project quotas (native/src/quota.cc); absent where /var keeps none. */
export interface ProjectQuotas {
  projectOf(path: string): number;
  setProject(path: string, id: number): void;
  setProjectLimit(path: string, id: number, bytes: number): void;
  projectUsage(path: string, id: number): { usedBytes: number; limitBytes: number };
}

/** What holds the volumes' directory: whether they outlive a power-off, and whether a size can be enforced. */
export interface VolumeBacking {
  persistent: boolean;
  /** The project quotas of the filesystem, when it is mounted to enforce them (prjquota). */
  quotas?: ProjectQuotas;
  /** Why volumes do not persist, or why a size is not enforced. */
  note?: string;
}

/**
 * The backing of `dir` as /proc/self/mounts (`mounts`) describes the mount holding it: a disk's filesystem
 * persists; one mounted with prjquota enforces sizes through `quotas`.
 */
export function volumeBacking(mounts: string, dir: string, quotas: ProjectQuotas): VolumeBacking {
  const holding = parseMounts(mounts)
    .filter((m) => dir === m.target || dir.startsWith(`${m.target.replace(/\/$/, '')}/`))
    .sort((a, b) => b.target.length - a.target.length)[0];
  if (!holding || !holding.source.startsWith('/dev/')) {
    return { persistent: false, note: `not persistent: ${dir} is in memory (${holding?.fstype ?? 'no'} filesystem; `
      + 'the machine has no EPHEMERAL partition), so its files are lost at power-off' };
  }
  if (!holding.options.split(',').includes('prjquota')) {
    return { persistent: true, note: `size not enforced: ${holding.target} (${holding.source}) keeps no project quotas `
      + '(its filesystem was made before volumes came; a new image\'s has them)' };
  }
  return { persistent: true, quotas };
}

/** The first project id volumes use (0 is every file's that has none). */
const FIRST_PROJECT = 1;

/** The project id of the volume directory `dir`: the one it has, else the lowest above every other volume's. */
function projectFor(root: string, dir: string, q: ProjectQuotas): number {
  const own = q.projectOf(dir);
  if (own !== 0) return own;
  let highest = FIRST_PROJECT - 1;
  for (const ext of readdirSync(root)) {
    for (const vol of readdirSync(join(root, ext))) highest = Math.max(highest, q.projectOf(join(root, ext, vol)));
  }
  q.setProject(dir, highest + 1);
  return highest + 1;
}

export interface PreparedVolumes {
  /** What the launcher binds: the machine's directory onto the path inside the extension's root. */
  mounts: { source: string; target: string }[];
  statuses: ExtensionVolume[];
  /** Every volume that could not be made ready, each named (none: it may start). */
  problems: string[];
}

/** Makes (or finds) extension `name`'s volumes under `root`, owned by `uid`, with their sizes set. */
export function prepareVolumes(
  o: { root: string; name: string; uid: number; volumes: readonly Volume[]; backing: VolumeBacking },
): PreparedVolumes {
  const out: PreparedVolumes = { mounts: [], statuses: [], problems: [] };
  if (!o.volumes.length) return out;
  const problems = out.problems;
  const own = join(o.root, o.name);
  mkdirSync(own, { recursive: true, mode: 0o755 });
  for (const v of o.volumes) {
    const dir = join(own, v.name);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      if (!isErrno(e, 'EEXIST')) throw e;
    }
    const st = lstatSync(dir);
    if (!st.isDirectory()) {
      problems.push(`volume ${v.name}: ${dir} is no directory`);
      continue;
    }
    if (st.uid !== o.uid || st.gid !== o.uid) chownSync(dir, o.uid, o.uid);
    const status: ExtensionVolume = { name: v.name, path: v.path, dir, persistent: o.backing.persistent, note: '' };
    const q = o.backing.quotas;
    if (q) {
      try {
        const id = projectFor(o.root, dir, q);
        q.setProjectLimit(dir, id, v.sizeBytes ?? 0);
        const usage = q.projectUsage(dir, id);
        status.usedBytes = usage.usedBytes;
        if (usage.limitBytes) status.sizeBytes = usage.limitBytes;
      } catch (e) {
        problems.push(`volume ${v.name}: its size on ${dir}: ${(e as Error).message}`);
      }
    } else if (!o.backing.persistent || v.sizeBytes !== undefined) status.note = o.backing.note ?? '';
    out.mounts.push({ source: dir, target: v.path });
    out.statuses.push(status);
  }
  return out;
}

/** What each volume's files take now, as its project quota counts them (the statuses unchanged without quotas). */
export function volumeUsage(statuses: readonly ExtensionVolume[], backing: VolumeBacking): ExtensionVolume[] {
  const q = backing.quotas;
  if (!q) return [...statuses];
  return statuses.map((s) => ({ ...s, usedBytes: q.projectUsage(s.dir, q.projectOf(s.dir)).usedBytes }));
}

/** Removes extension `name`'s volumes for good, their size limits first (the quota keeps a project's limit). */
export function purgeVolumes(root: string, name: string, backing: VolumeBacking): string[] {
  const own = join(root, name);
  const vols = listDir(own);
  const q = backing.quotas;
  if (q) {
    for (const v of vols) {
      const id = q.projectOf(join(own, v));
      if (id !== 0) q.setProjectLimit(join(own, v), id, 0);
    }
  }
  rmSync(own, { recursive: true, force: true });
  return vols;
}
