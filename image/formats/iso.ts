// iso: a hybrid ISO 9660 image that boots the live system from a CD-ROM or, written to a USB
// stick, as a disk, under BIOS and UEFI, and carries the install payload (install/) a machine
// booted from it installs to its disk. GRUB for all four ways in, from Debian's packages:
//   BIOS CD:    El Torito, no emulation: grub-mkimage -O i386-pc-eltorito (boot/grub/i386-pc/eltorito.img)
//   BIOS stick: GRUB's boot_hybrid.img in the MBR, told by xorriso where eltorito.img lies
//   UEFI CD:    El Torito's EFI entry: a small FAT image holding EFI/BOOT/BOOTX64.EFI
//   UEFI stick: the same FAT image, also listed as an ESP in the MBR's partition table
// Both loaders find the ISO's filesystem by a file named after the build (not by grub.cfg, which an
// installed disk has too) and read boot/grub/grub.cfg from it. Identical inputs give identical bytes:
// every time is the build's epoch, and xorriso's volume dates and ids follow SOURCE_DATE_EPOCH.
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { guidFrom } from '../../machinery/disk/gpt.ts';
import { fatImage, stageTree, type Tree } from '../disk/filesystems.ts';
import { GRUB_DIR, grubMkimage, isoGrubConfig } from '../disk/grub.ts';
import { INSTALL_DIR } from '../disk/install-payload.ts';
import { liveCmdline } from '../../machinery/disk/labels.ts';
import type { OutputFormat } from './format.ts';

export const ISO_VOLUME = 'APPLIANCE';
const ELTORITO = 'boot/grub/i386-pc/eltorito.img';
const EFI_IMAGE = 'boot/efi.img';
const KERNEL = '/boot/vmlinuz';
const INITRAMFS = '/boot/initramfs.cpio.zst';
const MiB = 1 << 20;

/** xorriso's date form, YYYYMMDDhhmmsscc (UTC). */
const isoDate = (epoch: number) => new Date(epoch * 1000).toISOString().replace(/\D/g, '').slice(0, 14) + '00';

export const iso: OutputFormat = {
  name: 'iso',
  summary: 'hybrid ISO: boots BIOS and UEFI from a CD or a USB stick; carries the install payload',
  async build(ctx) {
    const payload = await ctx.installPayload();
    const work = join(ctx.workDir, 'iso');
    mkdirSync(work, { recursive: true });
    const id = guidFrom(`${ctx.seed}/iso`).slice(0, 8).toLowerCase();
    const marker = `/boot/appliance-${id}.id`;
    const loader = { medium: 'iso', search: `--file ${marker}`, workDir: work } as const;

    const eltorito = join(work, 'eltorito.img');
    grubMkimage('i386-pc-eltorito', eltorito, loader);
    const efi = join(work, 'BOOTX64.EFI');
    grubMkimage('x86_64-efi', efi, loader);
    const efiImage = join(work, 'efi.img');
    fatImage({
      file: efiImage, sizeMiB: Math.ceil(statSync(efi).size / MiB) + 1, fatBits: 12, label: 'EFIBOOT',
      volumeId: guidFrom(`${ctx.seed}/iso-efi`).slice(0, 8), epoch: ctx.epoch, workDir: work,
      tree: { 'EFI/BOOT/BOOTX64.EFI': efi },
    });

    const tree: Tree = {
      [marker.slice(1)]: Buffer.from(`${ISO_VOLUME} ${id}\n`),
      'boot/grub/grub.cfg': Buffer.from(isoGrubConfig({
        cmdline: liveCmdline(ctx.inputs.cmdline), kernel: KERNEL, initramfs: INITRAMFS,
      })),
      [ELTORITO]: eltorito,
      [EFI_IMAGE]: efiImage,
      [KERNEL.slice(1)]: ctx.inputs.kernel,
      [INITRAMFS.slice(1)]: await ctx.liveInitramfs(),
    };
    for (const f of payload.files) tree[`${INSTALL_DIR}/${f.name}`] = f.path;
    const root = stageTree(work, tree, [], ctx.epoch);

    const out = join(ctx.outDir, 'appliance.iso');
    execFileSync('xorriso', [
      '-as', 'mkisofs', '-quiet', '-o', out, '-r', '-V', ISO_VOLUME, `--modification-date=${isoDate(ctx.epoch)}`,
      // BIOS: El Torito no-emulation entry, and the MBR code that finds it on a stick.
      '-b', ELTORITO, '-no-emul-boot', '-boot-load-size', '4', '-boot-info-table', '--grub2-boot-info',
      '--grub2-mbr', join(GRUB_DIR, 'i386-pc', 'boot_hybrid.img'),
      // UEFI: the FAT image as El Torito's EFI entry and as an ESP in the stick's partition table.
      '--efi-boot', EFI_IMAGE, '-efi-boot-part', '--efi-boot-image', '--protective-msdos-label',
      root,
    ], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SOURCE_DATE_EPOCH: String(ctx.epoch) } });
    return [out];
  },
};
