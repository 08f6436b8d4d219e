// grub: the disk's loader under both firmwares, from Debian's grub-pc-bin and
// grub-efi-amd64-bin. One grub.cfg on the ESP boots slot A or B and counts the tries of
// a new slot in grubenv (machinery/disk/grubenv.ts), so BIOS and UEFI fall back the same way.
//   UEFI: grub-mkimage -O x86_64-efi -> EFI/BOOT/BOOTX64.EFI (the removable-media path:
//         no NVRAM entry needed, so a copied disk boots anywhere).
//   BIOS: boot.img's 440 bytes of code in the protective MBR, pointing at core.img in the
//         BIOS boot partition; the two patches grub-bios-setup would make are made here.
// Both images carry an early config that finds the ESP by its FAT volume id, so neither
// depends on which disk number the firmware gives it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeSlotEnv, SLOT_FILES, SLOT_PARAM } from '../../machinery/disk/boot-slots.ts';

export const GRUB_DIR = '/usr/lib/grub';
const MODULES = [
  'search', 'search_fs_uuid', 'search_fs_file', 'configfile', 'normal', 'loadenv', 'linux', 'echo', 'test',
  'serial', 'terminal', 'sleep', 'reboot',
];
/**
 * Where GRUB runs: from a disk under BIOS (core.img) or UEFI, or from a CD under BIOS (El Torito,
 * no emulation). The ISO's UEFI loader is the x86_64-efi one with the ISO's modules.
 */
export type GrubTarget = 'i386-pc' | 'x86_64-efi' | 'i386-pc-eltorito';
const TARGET_MODULES: Record<GrubTarget, readonly string[]> = {
  'i386-pc': ['biosdisk'], 'i386-pc-eltorito': ['biosdisk'], 'x86_64-efi': [],
};
/** What the loader reads its config from: the disk's ESP (FAT on GPT), or the ISO's iso9660 (as a CD or a stick). */
export type GrubMedium = 'disk' | 'iso';
const MEDIUM_MODULES: Record<GrubMedium, readonly string[]> = {
  disk: ['part_gpt', 'fat'], iso: ['iso9660', 'part_msdos'],
};

// boot.img (GRUB 2's boot/i386/pc/boot.S): where grub-bios-setup patches it.
const KERNEL_SECTOR = 0x5c;
const DRIVE_CHECK = 0x66;
// diskboot.img, the first sector of core.img: its last 12 bytes list the rest of the image.
const BLOCKLIST = 0x200 - 12;
const KERNEL_SEGMENT = 0x820;

/** The early config every image carries: find the filesystem holding grub.cfg (`search` arguments), then read it. */
export const earlyConfig = (search: string) => [
  `search --no-floppy --set=root ${search}`,
  'set prefix=($root)/boot/grub',
  'configfile $prefix/grub.cfg',
  '',
].join('\n');

/** The search that finds the disk's ESP by its FAT volume id (XXXX-XXXX). */
export const espSearch = (espVolumeId: string) => `--fs-uuid ${espVolumeId}`;

export interface GrubImageOptions {
  medium: GrubMedium;
  /** `search` arguments that find the filesystem holding /boot/grub/grub.cfg. */
  search: string;
  workDir: string;
}

/** A GRUB image for `target` with the modules its medium needs and the early config, written to `out`. */
export function grubMkimage(target: GrubTarget, out: string, o: GrubImageOptions): void {
  const early = join(o.workDir, `early-${target}-${o.medium}.cfg`);
  writeFileSync(early, earlyConfig(o.search));
  const dir = join(GRUB_DIR, target === 'x86_64-efi' ? 'x86_64-efi' : 'i386-pc');
  execFileSync('grub-mkimage', [
    '-O', target, '-d', dir, '-o', out, '-p', '/boot/grub', '-c', early,
    ...MODULES, ...MEDIUM_MODULES[o.medium], ...TARGET_MODULES[target],
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * BIOS boot: boot.img's code (for the protective MBR) told where core.img starts, its floppy
 * check turned off (this is a hard disk), and core.img's first sector told where its rest lies.
 */
export function biosBoot(
  coreImg: Buffer, coreLba: number, bootImg = readFileSync(join(GRUB_DIR, 'i386-pc', 'boot.img')),
): { bootCode: Buffer; core: Buffer } {
  if (bootImg.length !== 512) throw new Error(`boot.img is ${bootImg.length} bytes, not 512`);
  const sectors = Math.ceil(coreImg.length / 512);
  if (sectors < 2 || sectors > 0xffff) throw new Error(`core.img of ${coreImg.length} bytes cannot be loaded`);
  const boot = Buffer.from(bootImg);
  boot.writeBigUInt64LE(BigInt(coreLba), KERNEL_SECTOR);
  boot[DRIVE_CHECK] = 0x90;
  boot[DRIVE_CHECK + 1] = 0x90;
  const core = Buffer.alloc(sectors * 512);
  coreImg.copy(core);
  if (core.readUInt16LE(BLOCKLIST + 10) !== KERNEL_SEGMENT) {
    throw new Error(`core.img: no diskboot blocklist (segment ${core.readUInt16LE(BLOCKLIST + 10).toString(16)})`);
  }
  core.writeBigUInt64LE(BigInt(coreLba + 1), BLOCKLIST);
  core.writeUInt16LE(sectors - 1, BLOCKLIST + 8);
  return { bootCode: boot.subarray(0, 440), core };
}

/** Where GRUB prints and reads, under either firmware; the start of every grub.cfg. */
const GRUB_TERMINALS = `set timeout=0
if [ "$grub_platform" = efi ]; then
  # UEFI firmware sends its console to the serial port where there is one (OVMF, clouds): GRUB's
  # own serial terminal beside it would print every line twice.
  terminal_input console
  terminal_output console
else
  serial --unit=0 --speed=115200
  terminal_input serial console
  terminal_output serial console
fi
`;

export interface GrubConfigOptions {
  /** The kernel command line (the slot is added as appliance.slot=). */
  cmdline: string;
  /** How many boots a new slot gets before the loader falls back. */
  tries: number;
}

/**
 * grub.cfg: the default slot, unless a slot is being tried and has tries left; each try is
 * counted in grubenv before the kernel starts, so a slot that never reports back is left
 * after `tries` boots. The running system marks a slot good (default_slot, try_slot unset).
 */
export function grubConfig(o: GrubConfigOptions): string {
  encodeSlotEnv({ cmdline: o.cmdline, version: '', commit: '' }); // the same words are safe in grub.cfg
  const countdown = Array.from({ length: o.tries }, (_, i) => o.tries - i).map((n, i) => [
    `${i === 0 ? 'if' : 'elif'} [ "$tries_left" = ${n} ]; then`,
    `    set tries_left=${n - 1}`,
    '    set slot=$try_slot',
  ].join('\n')).join('\n');
  return `# Written by the image build. Slots A and B live in /A and /B; grubenv says which boots.
${GRUB_TERMINALS}set default_slot=A
load_env default_slot try_slot tries_left
set slot=$default_slot
if [ -n "$try_slot" ]; then
  ${countdown.replace(/\n/g, '\n  ')}
  else
    set tried_slot=$try_slot
    set try_slot=
    save_env tried_slot
  fi
  save_env try_slot tries_left
fi
# Each slot boots with its own command line (an upgrade may change it); this one when slot.env is missing.
set cmdline="${o.cmdline}"
load_env --file /$slot/${SLOT_FILES.env} cmdline
echo "appliance: booting slot $slot"
linux /$slot/${SLOT_FILES.kernel} $cmdline ${SLOT_PARAM}=$slot
initrd /$slot/${SLOT_FILES.initramfs}
boot
# Only reached when the slot could not be loaded: the try is counted, so rebooting falls back.
echo "appliance: slot $slot did not load; rebooting"
sleep 3
reboot
`;
}

/** The ISO's grub.cfg: one system, nothing counted (a CD cannot be written). */
export function isoGrubConfig(o: { cmdline: string; kernel: string; initramfs: string }): string {
  return `# Written by the image build: the live system on this ISO.
${GRUB_TERMINALS}echo "appliance: booting the ISO"
linux ${o.kernel} ${o.cmdline}
initrd ${o.initramfs}
boot
`;
}
