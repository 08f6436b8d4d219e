// gpt: the GUID partition table (UEFI spec, chapter 5) as bytes, both ways. The image
// build writes the disk's table with it (no root, no sfdisk), and the storage plugin
// reads it and moves its end when the disk is larger than the image (first boot). A
// protective MBR at LBA 0 keeps its first 440 bytes (a BIOS loader's boot code) as given.
import { lazyCrypto, lazyZlib } from '../sys/lazy-builtins.ts';

export const SECTOR = 512;
const ENTRY_SIZE = 128;
const ENTRY_COUNT = 128;
/** Sectors of the partition entry array (16 KiB). */
export const ENTRY_SECTORS = (ENTRY_SIZE * ENTRY_COUNT) / SECTOR;
/** Sectors at the start of the disk: protective MBR, header, entries. */
export const HEAD_SECTORS = 2 + ENTRY_SECTORS;
/** Sectors at the end of the disk: the backup entries, then the backup header. */
export const TAIL_SECTORS = ENTRY_SECTORS + 1;
const SIGNATURE = 'EFI PART';
const REVISION = 0x00010000;
const HEADER_SIZE = 92;

/** Partition type GUIDs this system uses. */
export const PARTITION_TYPE = {
  esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  biosBoot: '21686148-6449-6E6F-744E-656564454649',
  linuxData: '0FC63DAF-8483-4772-8E79-3D69D8477DE4',
} as const;

export interface GptPartition {
  type: string;
  guid: string;
  name: string;
  firstLba: number;
  /** Inclusive. */
  lastLba: number;
  /** Attribute bits (bit 0 required, 2 legacy BIOS bootable, 48-63 type specific). */
  attributes?: bigint;
}

export interface Gpt {
  diskGuid: string;
  /** The disk's size in sectors. */
  sectors: number;
  partitions: GptPartition[];
}

export class GptError extends Error {
  constructor(message: string, readonly where: string) { super(`${where}: ${message}`); }
}

/** "C12A7328-F81F-..." -> the 16 bytes as stored: the first three fields little-endian. */
export function guidToBytes(guid: string): Buffer {
  const hex = guid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex) || !/^[^-]{8}-[^-]{4}-[^-]{4}-[^-]{4}-[^-]{12}$/.test(guid)) {
    throw new GptError('not a GUID (8-4-4-4-12 hex digits)', `"${guid}"`);
  }
  const b = Buffer.from(hex, 'hex');
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  return b;
}

export function bytesToGuid(bytes: Uint8Array): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  const h = b.toString('hex').toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A version-4-shaped GUID derived from `seed`: the same build gives the same disk. */
export function guidFrom(seed: string): string {
  const b = lazyCrypto().createHash('sha256').update(seed).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex').toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** First and last sector a partition may use on a disk of `sectors`. */
export const usableRange = (sectors: number) => ({ first: HEAD_SECTORS, last: sectors - TAIL_SECTORS - 1 });

function check(g: Gpt): void {
  const { first, last } = usableRange(g.sectors);
  if (g.partitions.length > ENTRY_COUNT) throw new GptError(`more than ${ENTRY_COUNT} partitions`, 'gpt');
  const sorted = [...g.partitions].sort((a, b) => a.firstLba - b.firstLba);
  sorted.forEach((p, i) => {
    const where = `partition "${p.name}"`;
    if (!Number.isSafeInteger(p.firstLba) || !Number.isSafeInteger(p.lastLba) || p.lastLba < p.firstLba) {
      throw new GptError(`sectors ${p.firstLba}-${p.lastLba} are not a range`, where);
    }
    if (p.firstLba < first || p.lastLba > last) {
      throw new GptError(`sectors ${p.firstLba}-${p.lastLba} are outside the usable ${first}-${last}`, where);
    }
    const prev = sorted[i - 1];
    if (prev && p.firstLba <= prev.lastLba) throw new GptError(`overlaps "${prev.name}"`, where);
    if (Buffer.byteLength(p.name, 'utf16le') > 72) throw new GptError('name longer than 36 UTF-16 units', where);
  });
}

function entries(g: Gpt): Buffer {
  const a = Buffer.alloc(ENTRY_SIZE * ENTRY_COUNT);
  g.partitions.forEach((p, i) => {
    const e = a.subarray(i * ENTRY_SIZE, (i + 1) * ENTRY_SIZE);
    guidToBytes(p.type).copy(e, 0);
    guidToBytes(p.guid).copy(e, 16);
    e.writeBigUInt64LE(BigInt(p.firstLba), 32);
    e.writeBigUInt64LE(BigInt(p.lastLba), 40);
    e.writeBigUInt64LE(p.attributes ?? 0n, 48);
    e.write(p.name, 56, 72, 'utf16le');
  });
  return a;
}

function header(g: Gpt, entryArray: Buffer, backup: boolean): Buffer {
  const h = Buffer.alloc(SECTOR);
  const { first, last } = usableRange(g.sectors);
  const lastLba = g.sectors - 1;
  h.write(SIGNATURE, 0, 'ascii');
  h.writeUInt32LE(REVISION, 8);
  h.writeUInt32LE(HEADER_SIZE, 12);
  h.writeBigUInt64LE(BigInt(backup ? lastLba : 1), 24);
  h.writeBigUInt64LE(BigInt(backup ? 1 : lastLba), 32);
  h.writeBigUInt64LE(BigInt(first), 40);
  h.writeBigUInt64LE(BigInt(last), 48);
  guidToBytes(g.diskGuid).copy(h, 56);
  h.writeBigUInt64LE(BigInt(backup ? lastLba - ENTRY_SECTORS : 2), 72);
  h.writeUInt32LE(ENTRY_COUNT, 80);
  h.writeUInt32LE(ENTRY_SIZE, 84);
  h.writeUInt32LE(lazyZlib().crc32(entryArray), 88);
  h.writeUInt32LE(lazyZlib().crc32(h.subarray(0, HEADER_SIZE)), 16);
  return h;
}

/** The protective MBR: one partition of type 0xEE over the whole disk; `bootCode` (up to 440 bytes) kept. */
export function protectiveMbr(sectors: number, bootCode?: Uint8Array): Buffer {
  const m = Buffer.alloc(SECTOR);
  if (bootCode) Buffer.from(bootCode.subarray(0, 440)).copy(m, 0);
  const e = m.subarray(446, 462);
  e.set([0x00, 0x00, 0x02, 0x00, 0xee, 0xff, 0xff, 0xff]);
  e.writeUInt32LE(1, 8);
  e.writeUInt32LE(Math.min(sectors - 1, 0xffffffff), 12);
  m[510] = 0x55;
  m[511] = 0xaa;
  return m;
}

/** The table as bytes: `head` goes at sector 0 (HEAD_SECTORS long), `tail` at sector `sectors - TAIL_SECTORS`. */
export function encodeGpt(g: Gpt, bootCode?: Uint8Array): { head: Buffer; tail: Buffer } {
  check(g);
  const a = entries(g);
  return {
    head: Buffer.concat([protectiveMbr(g.sectors, bootCode), header(g, a, false), a]),
    tail: Buffer.concat([a, header(g, a, true)]),
  };
}

/** Reads the primary table from the first HEAD_SECTORS of a disk of `sectors`, checking both CRCs. */
export function decodeGpt(head: Uint8Array, sectors: number): Gpt {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.length < HEAD_SECTORS * SECTOR) throw new GptError(`${b.length} bytes, less than the table`, 'gpt');
  const h = b.subarray(SECTOR, 2 * SECTOR);
  if (h.toString('ascii', 0, 8) !== SIGNATURE) throw new GptError('no "EFI PART" signature at LBA 1', 'gpt header');
  const size = h.readUInt32LE(12);
  if (size < HEADER_SIZE || size > SECTOR) throw new GptError(`header size ${size}`, 'gpt header');
  const copy = Buffer.from(h.subarray(0, size));
  copy.writeUInt32LE(0, 16);
  if (lazyZlib().crc32(copy) !== h.readUInt32LE(16)) throw new GptError('header CRC32 does not match', 'gpt header');
  const entryLba = Number(h.readBigUInt64LE(72));
  const count = h.readUInt32LE(80);
  const entrySize = h.readUInt32LE(84);
  if (entrySize !== ENTRY_SIZE || count !== ENTRY_COUNT || entryLba !== 2) {
    throw new GptError(`entries at LBA ${entryLba}, ${count} of ${entrySize} bytes: only 128 of 128 at LBA 2 are read`,
      'gpt header');
  }
  const a = b.subarray(2 * SECTOR, 2 * SECTOR + count * entrySize);
  if (lazyZlib().crc32(a) !== h.readUInt32LE(88)) {
    throw new GptError('partition entry array CRC32 does not match', 'gpt');
  }
  const partitions: GptPartition[] = [];
  for (let i = 0; i < count; i++) {
    const e = a.subarray(i * entrySize, (i + 1) * entrySize);
    if (e.subarray(0, 16).every((x) => x === 0)) continue;
    const nameBytes = e.subarray(56, 128);
    let end = 0;
    while (end < nameBytes.length && (nameBytes[end] !== 0 || nameBytes[end + 1] !== 0)) end += 2;
    partitions.push({
      type: bytesToGuid(e.subarray(0, 16)), guid: bytesToGuid(e.subarray(16, 32)),
      firstLba: Number(e.readBigUInt64LE(32)), lastLba: Number(e.readBigUInt64LE(40)),
      attributes: e.readBigUInt64LE(48), name: nameBytes.subarray(0, end).toString('utf16le'),
    });
  }
  return { diskGuid: bytesToGuid(h.subarray(56, 72)), sectors, partitions };
}

/**
 * The table for the same disk grown to `sectors`: the backup moves to the new end and the
 * partition named `grow` (which must be the last one) takes the room up to the last usable sector.
 */
export function growGpt(g: Gpt, sectors: number, grow: string): Gpt {
  if (sectors < g.sectors) throw new GptError(`the disk shrank from ${g.sectors} to ${sectors} sectors`, 'gpt');
  const last = [...g.partitions].sort((a, b) => b.lastLba - a.lastLba)[0];
  if (!last || last.name !== grow) {
    throw new GptError(`"${grow}" is not the last partition (${last ? `"${last.name}" is` : 'there is none'})`, 'gpt');
  }
  const grown = { ...g, sectors, partitions: g.partitions.map((p) => ({ ...p })) };
  grown.partitions.find((p) => p.name === grow)!.lastLba = usableRange(sectors).last;
  check(grown);
  return grown;
}
