// image-mount: a squashfs image file mounted read-only, without setuid or device files, through a
// loop device that goes away by itself once the mount is gone (an extension's image). Unmounting
// is the caller's umount2: the loop device then detaches (autoclear).
import type { Native } from '../../native/index.ts';
import { MS } from './mount-table.ts';

export type ImageMountOps = Pick<Native, 'attachLoop' | 'mount' | 'closeFd'>;

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
