// artifacts: the built outputs tests and launchers boot (out/, see scripts/build.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DiskForm } from '../image/disk/raw.ts';
import { DISK_INITRAMFS, DISK_SYSTEM_IMAGE, DISK_SYSTEM_IMAGE_ZST } from '../image/system-image.ts';

const OUT = fileURLToPath(new URL('../out/', import.meta.url));

export interface Artifacts {
  kernel: string; initrd: string; cmdline: string; exe: string; dir: string;
  /** The same system with its image on a disk (scripts/build.ts, "disk form"): its initramfs and the disk's image. */
  disk: DiskForm;
}

export function artifacts(dir = OUT): Artifacts {
  const a = {
    kernel: join(dir, 'vmlinuz'), initrd: join(dir, 'initramfs.cpio.zst'), exe: join(dir, 'build', 'appliance'), dir,
    cmdline: '', disk: {
      initramfs: join(dir, 'build', DISK_INITRAMFS), image: join(dir, 'build', DISK_SYSTEM_IMAGE),
      compressedImage: join(dir, 'build', DISK_SYSTEM_IMAGE_ZST),
    },
  };
  const missing = [a.kernel, a.initrd, join(dir, 'cmdline'), a.disk.initramfs, a.disk.image, a.disk.compressedImage]
    .filter((p) => !existsSync(p));
  if (missing.length) throw new Error(`not built: ${missing.join(', ')}; run \`npm run build\``);
  a.cmdline = readFileSync(join(dir, 'cmdline'), 'utf8').trim();
  return a;
}
