// raw: the bootable GPT disk, assembled in an image file without root: the table from
// machinery/disk/gpt.ts, filesystems made as files (filesystems.ts) and written at their
// offsets, GRUB for both firmwares (grub.ts). Sparse: zero blocks are never written.
//   1 BIOS   BIOS boot partition: GRUB's core.img (the MBR's boot code points at it)
//   2 EFI    FAT32: EFI/BOOT/BOOTX64.EFI, boot/grub/{grub.cfg,grubenv}, slots /A and /B
//   3 STATE  ext4, the persisted machine config
//   4 EPHEMERAL ext4 at /var, grown to the end of the disk at first boot (so physically last)
//   5 SYSTEM-A, 6 SYSTEM-B  when the build has a disk form: SYSTEM-A holds slot A's system image (slot A's
//            initramfs then holds only its superblock and stage0 reads the image from SYSTEM-A: ARCHITECTURE.md,
//            "The disk form"); SYSTEM-B is kept empty for the other slot; both between STATE and EPHEMERAL
// The slots' kernels and initramfs are directories on the ESP, not partitions: the loader reads one
// filesystem under both firmwares. The ESP keeps room for two slots of the self-contained initramfs,
// so that either slot can take a system that carries its image in its initramfs (an older release's).
import { closeSync, ftruncateSync, openSync, readdirSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { encodeGpt, guidFrom, PARTITION_TYPE, SECTOR, usableRange, type Gpt } from '../../machinery/disk/gpt.ts';
import {
  encodeLoaderState, encodeSlotEnv, ESP_LABEL, GRUBENV_PATH, SLOT_FILES,
} from '../../machinery/disk/boot-slots.ts';
import { EPHEMERAL_LABEL, STATE_LABEL, systemLabel } from '../../machinery/disk/labels.ts';
import { ext4Image, fatImage } from './filesystems.ts';
import { biosBoot, espSearch, grubConfig, grubMkimage } from './grub.ts';

const MiB = 1 << 20;
const SECTORS_PER_MiB = MiB / SECTOR;
export const STATE_MIB = 16;
export const BOOT_TRIES = 3;
/** A SYSTEM partition's room over the image it is made with: a later release's image may be larger. */
export const SYSTEM_ROOM = 1.5;

export interface RawDiskOptions {
  out: string;
  kernel: string;
  initramfs: string;
  cmdline: string;
  /** Whole disk size (default: the smallest that holds it all, rounded up to 64 MiB). */
  sizeMiB?: number;
  /** Seeds every GUID, UUID and volume id: the same seed and inputs give the same bytes. */
  seed: string;
  epoch: number;
  /** The appliance's payload files (machinery/disk/slot-payload.ts), put into slot A beside its kernel. */
  payloadDir?: string;
  /**
   * The disk form of the same system (image/appliance/system-kit.ts, kitDiskForm): its image goes into SYSTEM-A and
   * its initramfs into slot A in place of `initramfs`. Without it the disk has no SYSTEM partitions.
   */
  diskForm?: DiskForm;
  /** What slot A holds (its slot.env). */
  release: { version: string; commit: string };
  workDir: string;
}

/**
 * A system whose image is read from a disk: the image as the disk holds it, the initramfs that finds it, and the
 * image zstd'd as an upgrade bundle carries it.
 */
export interface DiskForm { image: string; initramfs: string; compressedImage: string }

export interface RawDisk { file: string; gpt: Gpt; espVolumeId: string; sizeBytes: number }

const mibOf = (bytes: number) => Math.ceil(bytes / MiB);
const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

/** Writes `file` at byte `at` of `fd`, skipping all-zero blocks (the output stays sparse). */
function place(fd: number, file: string, at: number): void {
  const src = openSync(file, 'r');
  const buf = Buffer.alloc(MiB);
  try {
    for (let off = 0; ; off += MiB) {
      const n = readSync(src, buf, 0, MiB, off);
      if (n <= 0) break;
      const chunk = buf.subarray(0, n);
      if (chunk.some((b) => b !== 0)) writeSync(fd, chunk, 0, n, at + off);
    }
  } finally { closeSync(src); }
}

export function buildRawDisk(o: RawDiskOptions): RawDisk {
  const id = (what: string) => guidFrom(`${o.seed}/${what}`);
  const espVolumeId = id('esp-volume').replace(/-/g, '').slice(0, 8);
  const extras = o.payloadDir ? readdirSync(o.payloadDir).sort().map((f) => join(o.payloadDir!, f)) : [];
  const payload = [o.kernel, o.initramfs, ...extras].reduce((n, f) => n + statSync(f).size, 0);
  // Room for two slots (an upgrade writes the other while this one runs: each its kernel, initramfs and the
  // appliance's payload) and the loaders, 8 MiB; FAT32 wants at least 65525 clusters (32 MiB of 512-byte ones).
  const espMiB = Math.max(64, roundUp(mibOf(2 * payload) + 8, 8));
  // Room to stage an upgrade of the same size (its parts are kept on /var until they are checked), and 32 MiB more:
  // a machine stages the parts of its own form, the disk form's its kernel, initramfs and zstd'd image.
  const staged = o.diskForm ? payload - statSync(o.initramfs).size + statSync(o.diskForm.initramfs).size
    + statSync(o.diskForm.compressedImage).size : payload;
  const ephemeralMinMiB = mibOf(Math.max(payload, staged)) + 32;
  const imageBytes = o.diskForm ? statSync(o.diskForm.image).size : 0;
  const systemMiB = o.diskForm ? roundUp(mibOf(imageBytes * SYSTEM_ROOM), 16) : 0;
  const needMiB = 1 + 1 + espMiB + STATE_MIB + 2 * systemMiB + ephemeralMinMiB + 1;
  const sizeMiB = o.sizeMiB ?? roundUp(needMiB, 64);
  if (sizeMiB < needMiB) throw new Error(`--size ${sizeMiB} MiB: the disk needs at least ${needMiB} MiB`);
  const sectors = sizeMiB * SECTORS_PER_MiB;

  // Laid out in this order on the disk; listed in the table with EPHEMERAL fourth, as disks without SYSTEM have it.
  let at = SECTORS_PER_MiB; // partitions start 1 MiB aligned
  const part = (name: string, type: string, mib: number | 'rest') => {
    const first = at;
    const last = mib === 'rest' ? usableRange(sectors).last : first + mib * SECTORS_PER_MiB - 1;
    at = last + 1;
    return { name, type, guid: id(`part/${name}`), firstLba: first, lastLba: last };
  };
  const bios = part('BIOS', PARTITION_TYPE.biosBoot, 1);
  const esp = { ...part(ESP_LABEL, PARTITION_TYPE.esp, espMiB), attributes: 1n };
  const state = part(STATE_LABEL, PARTITION_TYPE.linuxData, STATE_MIB);
  const systems = o.diskForm
    ? (['A', 'B'] as const).map((slot) => part(systemLabel(slot), PARTITION_TYPE.linuxData, systemMiB)) : [];
  const ephemeral = part(EPHEMERAL_LABEL, PARTITION_TYPE.linuxData, 'rest');
  const gpt: Gpt = { diskGuid: id('disk'), sectors, partitions: [bios, esp, state, ephemeral, ...systems] };

  const efiImage = join(o.workDir, 'BOOTX64.EFI');
  const espUuid = `${espVolumeId.slice(0, 4)}-${espVolumeId.slice(4)}`.toUpperCase(); // as GRUB and blkid show it
  const loader = { medium: 'disk', search: espSearch(espUuid), workDir: o.workDir } as const;
  grubMkimage('x86_64-efi', efiImage, loader);
  const coreImage = join(o.workDir, 'core.img');
  grubMkimage('i386-pc', coreImage, loader);
  const { bootCode, core } = biosBoot(readFileSync(coreImage), bios.firstLba);
  if (core.length > (bios.lastLba - bios.firstLba + 1) * SECTOR) throw new Error(`core.img (${core.length} bytes) `
    + 'does not fit the 1 MiB BIOS boot partition');

  const espFile = join(o.workDir, 'esp.img');
  fatImage({
    file: espFile, sizeMiB: espMiB, label: ESP_LABEL, volumeId: espVolumeId, epoch: o.epoch, workDir: o.workDir,
    tree: {
      'EFI/BOOT/BOOTX64.EFI': efiImage,
      'boot/grub/grub.cfg': Buffer.from(grubConfig({ cmdline: o.cmdline, tries: BOOT_TRIES })),
      [GRUBENV_PATH]: encodeLoaderState({ defaultSlot: 'A', triesLeft: 0, good: new Set(['A']) }),
      [`A/${SLOT_FILES.kernel}`]: o.kernel,
      [`A/${SLOT_FILES.initramfs}`]: o.diskForm?.initramfs ?? o.initramfs,
      [`A/${SLOT_FILES.env}`]: encodeSlotEnv({ cmdline: o.cmdline, ...o.release }),
      ...Object.fromEntries(extras.map((f) => [`A/${basename(f)}`, f])),
    },
    dirs: ['B'],
  });
  const stateFile = join(o.workDir, 'state.img');
  ext4Image({
    file: stateFile, sizeMiB: STATE_MIB, label: STATE_LABEL, uuid: id('fs/state'), hashSeed: id('seed/state'),
    epoch: o.epoch, workDir: o.workDir,
  });
  const ephemeralFile = join(o.workDir, 'ephemeral.img');
  const ephemeralMiB = (ephemeral.lastLba - ephemeral.firstLba + 1) / SECTORS_PER_MiB;
  ext4Image({
    file: ephemeralFile, sizeMiB: Math.floor(ephemeralMiB), label: EPHEMERAL_LABEL, uuid: id('fs/ephemeral'),
    hashSeed: id('seed/ephemeral'), epoch: o.epoch, workDir: o.workDir,
    // Project quotas: an extension volume's `size:` is enforced (PID 1 mounts it with prjquota).
    features: ['quota', 'project'],
  });

  const { head, tail } = encodeGpt(gpt, bootCode);
  const fd = openSync(o.out, 'w');
  try {
    ftruncateSync(fd, sectors * SECTOR);
    writeSync(fd, head, 0, head.length, 0);
    writeSync(fd, tail, 0, tail.length, (sectors - tail.length / SECTOR) * SECTOR);
    writeSync(fd, core, 0, core.length, bios.firstLba * SECTOR);
    place(fd, espFile, esp.firstLba * SECTOR);
    place(fd, stateFile, state.firstLba * SECTOR);
    if (o.diskForm) place(fd, o.diskForm.image, systems[0]!.firstLba * SECTOR);
    place(fd, ephemeralFile, ephemeral.firstLba * SECTOR);
  } finally { closeSync(fd); }
  return { file: o.out, gpt, espVolumeId, sizeBytes: sectors * SECTOR };
}
