// superblock: which filesystem a block device holds, its label and UUID, read from
// the first 64 KiB (no blkid, no libblkid). Formats: ext2/3/4, vfat (FAT12/16/32),
// iso9660, squashfs, swap; and, to name what a disk holds that this system does not use, NTFS and an LVM
// physical volume (blkid's names: ntfs, LVM2_member).
export interface Probe { fstype: string; label?: string; uuid?: string }

/** How much of the device probe() needs. */
export const PROBE_BYTES = 64 * 1024;

const str = (b: Buffer, start: number, len: number) => b.toString('latin1', start, start + len).replace(/[\0 ]+$/, '');
const hex = (b: Buffer) => b.toString('hex');

function uuid16(b: Buffer): string {
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An ext2/3/4 filesystem's size: its block size and block count (the superblock at 1024). */
export function extGeometry(b: Buffer): { blockSize: number; blocks: number } | null {
  if (b.length < 2048 || b.readUInt16LE(1024 + 56) !== 0xef53) return null;
  const incompat = b.readUInt32LE(1024 + 96);
  const hi = incompat & 0x80 /* 64bit */ ? b.readUInt32LE(1024 + 0x150) : 0;
  return { blockSize: 1024 << b.readUInt32LE(1024 + 24), blocks: hi * 2 ** 32 + b.readUInt32LE(1024 + 4) };
}

/**
 * Whether an ext4 superblock (the first 2 KiB of its device) has the quota and project features: mounted with
 * prjquota, it limits each project's size (ext4 project quotas; an extension volume's `size:`).
 */
export function extProjectQuota(b: Buffer): boolean {
  if (b.length < 2048 || b.readUInt16LE(1024 + 56) !== 0xef53) return false;
  const roCompat = b.readUInt32LE(1024 + 100);
  return (roCompat & 0x100 /* quota */) !== 0 && (roCompat & 0x2000 /* project */) !== 0;
}

export function probe(b: Buffer): Probe | null {
  // ext2/3/4: superblock at 1024, magic 0xEF53 at +56
  if (b.length >= 2048 && b.readUInt16LE(1024 + 56) === 0xef53) {
    const compatFeatures = b.readUInt32LE(1024 + 92);
    const incompat = b.readUInt32LE(1024 + 96);
    const fstype = incompat & 0x40 /* extents */ || incompat & 0x80 /* 64bit */ ? 'ext4'
      : compatFeatures & 0x4 /* has_journal */ ? 'ext3' : 'ext2';
    const label = str(b, 1024 + 120, 16);
    return { fstype, uuid: uuid16(b.subarray(1024 + 104, 1024 + 120)), ...(label ? { label } : {}) };
  }
  // squashfs: "hsqs" at 0
  if (b.length >= 4 && b.toString('latin1', 0, 4) === 'hsqs') return { fstype: 'squashfs' };
  // iso9660: primary volume descriptor at 32 KiB: type 1, "CD001"
  if (b.length >= 0x8000 + 72 && b[0x8000] === 1 && b.toString('latin1', 0x8001, 0x8006) === 'CD001') {
    const label = str(b, 0x8028, 32);
    return { fstype: 'iso9660', ...(label ? { label } : {}) };
  }
  // NTFS: "NTFS    " as the boot sector's OEM id, at 3
  if (b.length >= 512 && b.toString('latin1', 3, 11) === 'NTFS    ') return { fstype: 'ntfs' };
  // LVM2 physical volume: a "LABELONE" label in one of the first four sectors, type "LVM2 001"
  for (let sector = 0; sector < 4 && b.length >= (sector + 1) * 512; sector++) {
    const at = sector * 512;
    if (b.toString('latin1', at, at + 8) === 'LABELONE' && b.toString('latin1', at + 24, at + 32) === 'LVM2 001') {
      return { fstype: 'LVM2_member' };
    }
  }
  // vfat: boot sector signature 0x55AA; FAT32 keeps its label at 0x47, FAT12/16 at 0x2B
  if (b.length >= 512 && b[510] === 0x55 && b[511] === 0xaa) {
    const fat32 = b.toString('latin1', 0x52, 0x57) === 'FAT32';
    const fat16 = b.toString('latin1', 0x36, 0x39) === 'FAT';
    if (fat32 || fat16) {
      const off = fat32 ? 0x43 : 0x27; // volume id, then the 11-byte label
      const id = b.readUInt32LE(off);
      const label = str(b, off + 4, 11);
      return {
        fstype: 'vfat',
        uuid: `${(id >>> 16).toString(16).toUpperCase().padStart(4, '0')}-`
          + `${(id & 0xffff).toString(16).toUpperCase().padStart(4, '0')}`,
        ...(label && label !== 'NO NAME' ? { label } : {}),
      };
    }
  }
  // swap: "SWAPSPACE2" at the end of the first page
  if (b.length >= 4096 && b.toString('latin1', 4086, 4096) === 'SWAPSPACE2') return { fstype: 'swap' };
  return null;
}
