// extension-root: the file system an extension's program sees. Made by its launcher in a mount
// namespace of its own (private: nothing comes in or goes out) just before the launcher becomes
// the program: the extension's image as / (read-only, nosuid, nodev, as the engine mounted it), a
// /proc showing its own processes only, a /dev holding only the harmless character devices (bound
// from the machine's), an empty
// /tmp and /run (tmpfs, nosuid, nodev), its volumes (the machine's directories for it, bound, nosuid,
// nodev), the devices its ExtensionSpec grants (bound into its /dev), its secret files (read-only, on
// /run/secrets), and the engine's plugin socket at PLUGIN_SOCKET_INSIDE.
// The machine's own files are out of reach: the old root is detached (or, where the root is the
// initramfs, left beneath the image, out of reach without the chroot and mount the filter refuses).
import { lstatSync, mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Native } from '../../native/index.ts';
import { isErrno } from '../../native/errno.ts';
import { MS } from './mount-table.ts';

/** Directories the image must hold (empty) for the launcher to mount on: its image is read-only. */
export const EXTENSION_MOUNT_POINTS = ['/proc', '/dev', '/tmp', '/run'] as const;
/** The devices an extension's /dev holds. */
export const EXTENSION_DEVICES = ['null', 'zero', 'full', 'random', 'urandom'] as const;
/** Where its secret files are inside an extension (ExtensionSecret's files). */
export const SECRETS_INSIDE = '/run/secrets';
/** Where the plugin socket is inside an extension (COSI_PLUGIN_SOCKET says so too). */
export const PLUGIN_SOCKET_INSIDE = '/run/cosi/plugins.sock';

export type ExtensionRootOps = Pick<Native, 'mount' | 'enterRoot'>;

/** What an image lacks to be an extension's root: each mount point missing (a link is none), named. */
export function missingMountPoints(image: string): string[] {
  return EXTENSION_MOUNT_POINTS.flatMap((p) => {
    try {
      return lstatSync(join(image, p)).isDirectory() ? [] : [`${p} in the image is no directory (make it, empty)`];
    } catch (e) {
      return [isErrno(e, 'ENOENT', 'ENOTDIR') ? `the image has no directory ${p} to mount on (make it, empty)`
        : `${p} in the image: ${(e as Error).message}`];
    }
  });
}

/**
 * Mounts the extension's /proc, /dev, /tmp and /run inside `image` and makes `image` the calling thread's
 * root. Call it only in a private mount namespace of the calling thread's own, then exec at once.
 */
export function enterExtensionRoot(
  n: ExtensionRootOps, o: {
    image: string; pluginSocket: string; volumes?: { source: string; target: string }[];
    devices?: { source: string; target: string }[]; secrets?: string;
  },
): 'pivot' | 'move' {
  const at = (p: string) => join(o.image, p);
  const { NOSUID, NODEV, NOEXEC, BIND, REMOUNT, RDONLY } = MS;
  for (const v of o.volumes ?? []) {
    n.mount(v.source, at(v.target), '', BIND);
    // A bind takes its flags only from a remount of it.
    n.mount('', at(v.target), '', REMOUNT | BIND | NOSUID | NODEV);
  }
  // Its own processes only: the machine's are other users' (hidepid=invisible).
  n.mount('proc', at('/proc'), 'proc', NOSUID | NODEV | NOEXEC, 'hidepid=invisible');
  // The devices are bind mounts of the machine's device files; the tmpfs under them holds no device of its own.
  n.mount('dev', at('/dev'), 'tmpfs', NOSUID | NODEV | NOEXEC, 'mode=0755,size=64k');
  for (const d of EXTENSION_DEVICES) {
    writeFileSync(at(`/dev/${d}`), '');
    n.mount(`/dev/${d}`, at(`/dev/${d}`), '', BIND);
  }
  // The devices its ExtensionSpec grants, at the paths it asked for (the engine made them its uid's).
  for (const d of o.devices ?? []) {
    mkdirSync(posix.dirname(at(d.target)), { recursive: true, mode: 0o755 });
    writeFileSync(at(d.target), '');
    n.mount(d.source, at(d.target), '', BIND);
  }
  n.mount('tmp', at('/tmp'), 'tmpfs', NOSUID | NODEV, 'mode=1777,size=16m');
  n.mount('run', at('/run'), 'tmpfs', NOSUID | NODEV | NOEXEC, 'mode=0755,size=64k');
  mkdirSync(at('/run/cosi'), { mode: 0o755 });
  if (o.secrets) {
    mkdirSync(at(SECRETS_INSIDE), { mode: 0o755 });
    n.mount(o.secrets, at(SECRETS_INSIDE), '', BIND);
    n.mount('', at(SECRETS_INSIDE), '', REMOUNT | BIND | RDONLY | NOSUID | NODEV | NOEXEC);
  }
  writeFileSync(at(PLUGIN_SOCKET_INSIDE), '');
  n.mount(o.pluginSocket, at(PLUGIN_SOCKET_INSIDE), '', BIND);
  return n.enterRoot(o.image);
}

/**
 * `path` (absolute, inside the image mounted on `root`) with its links followed as the extension would see
 * them, never out of `root`; undefined when it leads nowhere.
 */
export function resolveInImage(root: string, path: string, hops = 0): string | undefined {
  const parts = posix.normalize(path).split('/').filter(Boolean);
  let at = '/';
  for (let i = 0; i < parts.length; i++) {
    const next = posix.join(at, parts[i]!);
    // A file where a directory is wanted leads nowhere too (ENOTDIR, not ENOENT).
    if (i > 0 && !lstatSync(join(root, at)).isDirectory()) return undefined;
    const st = lstatSync(join(root, next), { throwIfNoEntry: false });
    if (!st) return undefined;
    if (st.isSymbolicLink()) {
      if (hops >= 40) return undefined;
      const target = readlinkSync(join(root, next));
      const rest = parts.slice(i + 1).join('/');
      return resolveInImage(root, posix.join(target.startsWith('/') ? target : posix.join(at, target), rest), hops + 1);
    }
    at = next;
  }
  return at;
}
