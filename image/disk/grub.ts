// grub: the disk's loader under both firmwares, from Debian's grub-pc-bin and
// grub-efi-amd64-bin. One grub.cfg on the ESP boots slot A or B and counts the tries of
// a new slot in grubenv (init/disk/grubenv.ts), so BIOS and UEFI fall back the same way.
//   UEFI: grub-mkimage -O x86_64-efi -> EFI/BOOT/BOOTX64.EFI (the removable-media path:
//         no NVRAM entry needed, so a copied disk boots anywhere).
//   BIOS: boot.img's 440 bytes of code in the protective MBR, pointing at core.img in the
//         BIOS boot partition; the two patches grub-bios-setup would make are made here.
// Both images carry an early config that finds the ESP by its FAT volume id, so neither
// depends on which disk number the firmware gives it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const GRUB_DIR = '/usr/lib/grub';
const MODULES = [
  'part_gpt', 'fat', 'search', 'search_fs_uuid', 'configfile', 'normal', 'loadenv', 'linux', 'echo', 'test',
  'serial', 'terminal', 'sleep', 'reboot',
];
const PLATFORM_MODULES = { 'i386-pc': ['biosdisk'], 'x86_64-efi': [] } as const;

// boot.img (GRUB 2's boot/i386/pc/boot.S): where grub-bios-setup patches it.
const KERNEL_SECTOR = 0x5c;
const DRIVE_CHECK = 0x66;
// diskboot.img, the first sector of core.img: its last 12 bytes list the rest of the image.
const BLOCKLIST = 0x200 - 12;
const KERNEL_SEGMENT = 0x820;

/** The early config both images carry: find the ESP, then its grub.cfg. */
export const earlyConfig = (espVolumeId: string) => [
  `search --no-floppy --fs-uuid --set=root ${espVolumeId}`,
  'set prefix=($root)/boot/grub',
  'configfile $prefix/grub.cfg',
  '',
].join('\n');

/** A GRUB image of `format` with our modules and early config, written to `out`. */
export function grubMkimage(format: 'i386-pc' | 'x86_64-efi', out: string, workDir: string, espVolumeId: string): void {
  const early = join(workDir, `early-${format}.cfg`);
  writeFileSync(early, earlyConfig(espVolumeId));
  execFileSync('grub-mkimage', [
    '-O', format, '-d', join(GRUB_DIR, format), '-o', out, '-p', '/boot/grub', '-c', early,
    ...MODULES, ...PLATFORM_MODULES[format],
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
  boot[DRIVE_CHECK] = 0x90; boot[DRIVE_CHECK + 1] = 0x90;
  const core = Buffer.alloc(sectors * 512);
  coreImg.copy(core);
  if (core.readUInt16LE(BLOCKLIST + 10) !== KERNEL_SEGMENT) {
    throw new Error(`core.img: no diskboot blocklist (segment ${core.readUInt16LE(BLOCKLIST + 10).toString(16)})`);
  }
  core.writeBigUInt64LE(BigInt(coreLba + 1), BLOCKLIST);
  core.writeUInt16LE(sectors - 1, BLOCKLIST + 8);
  return { bootCode: boot.subarray(0, 440), core };
}

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
  const countdown = Array.from({ length: o.tries }, (_, i) => o.tries - i).map((n, i) => [
    `${i === 0 ? 'if' : 'elif'} [ "$tries_left" = ${n} ]; then`,
    `    set tries_left=${n - 1}`,
    '    set slot=$try_slot',
  ].join('\n')).join('\n');
  return `# Written by the image build. Slots A and B live in /A and /B; grubenv says which boots.
set timeout=0
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
set default_slot=A
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
echo "appliance: booting slot $slot"
linux /$slot/vmlinuz ${o.cmdline} appliance.slot=$slot
initrd /$slot/initramfs.cpio.zst
boot
# Only reached when the slot could not be loaded: the try is counted, so rebooting falls back.
echo "appliance: slot $slot did not load; rebooting"
sleep 3
reboot
`;
}
