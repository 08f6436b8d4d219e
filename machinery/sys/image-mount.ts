// image-mount: an extension's image mounted read-only, without setuid or device files: a squashfs image file through
// a loop device that goes away by itself once the mount is gone (autoclear), or a directory (an OCI image pulled and
// unpacked) bound. Unmounting is the caller's umount2.
import { statSync } from 'node:fs';
import type { Native } from '../../native/index.ts';
import { MNT_DETACH, MS } from './mount-table.ts';

export type ImageMountOps = Pick<Native, 'attachLoop' | 'mount' | 'closeFd' | 'umount2'>;

/** Mounts the image at `path` on `target`: a directory bound, a file as squashfs (mountSquashfsImage). */
export function mountImage(n: ImageMountOps, path: string, target: string): void {
  if (!statSync(path).isDirectory()) {
    mountSquashfsImage(n, path, target);
    return;
  }
  n.mount(path, target, '', MS.BIND);
  try {
    // A bind takes its flags only when remounted.
    n.mount('', target, '', MS.BIND | MS.REMOUNT | MS.RDONLY | MS.NOSUID | MS.NODEV);
  } catch (e) {
    // Not left writable: whoever removes the mount point after a failure would remove the image's files through it.
    n.umount2(target, MNT_DETACH);
    throw e;
  }
}

/** Mounts `file` (squashfs) on `target`; returns the loop device it went through. Throws the addon's errno Error. */
export function mountSquashfsImage(n: ImageMountOps, file: string, target: string): string {
  const { device, fd } = n.attachLoop(file);
  try {
    n.mount(device, target, 'squashfs', MS.RDONLY | MS.NOSUID | MS.NODEV);
  } finally {
    // The mount holds the device now; without one, this last close detaches it.
    n.closeFd(fd);
  }
  return device;
}
