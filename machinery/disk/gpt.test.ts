// gpt: encode, decode, grow; what we write is read back by sfdisk (util-linux), an
// independent reader, and a corrupted table is refused with the reason.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bytesToGuid, decodeGpt, encodeGpt, growGpt, guidFrom, guidToBytes, HEAD_SECTORS, PARTITION_TYPE, SECTOR,
  TAIL_SECTORS, type Gpt,
} from './gpt.ts';

const MiB = 2048; // sectors
const layout = (sectors: number): Gpt => ({
  diskGuid: guidFrom('disk'), sectors,
  partitions: [
    { type: PARTITION_TYPE.biosBoot, guid: guidFrom('bios'), name: 'BIOS', firstLba: MiB, lastLba: 2 * MiB - 1 },
    {
      type: PARTITION_TYPE.esp, guid: guidFrom('esp'), name: 'EFI', firstLba: 2 * MiB, lastLba: 34 * MiB - 1,
      attributes: 1n,
    },
    {
      type: PARTITION_TYPE.linuxData, guid: guidFrom('state'), name: 'STATE', firstLba: 34 * MiB,
      lastLba: 42 * MiB - 1,
    },
    {
      type: PARTITION_TYPE.linuxData, guid: guidFrom('ephemeral'), name: 'EPHEMERAL', firstLba: 42 * MiB,
      lastLba: sectors - TAIL_SECTORS - 1,
    },
  ],
});

function writeDisk(g: Gpt, file: string): void {
  const { head, tail } = encodeGpt(g);
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    writeSync(fd, tail, 0, tail.length, (g.sectors - TAIL_SECTORS) * SECTOR);
  } finally { closeSync(fd); }
}

interface SfdiskPartition { start: number; size: number; type: string; uuid: string; name: string; attrs?: string }
const sfdisk = (file: string) => (JSON.parse(execFileSync('sfdisk', ['--json', file], { encoding: 'utf8' })) as {
  partitiontable: { label: string; id: string; firstlba: number; lastlba: number; partitions: SfdiskPartition[] };
}).partitiontable;

const dir = mkdtempSync(join(tmpdir(), 'gpt-'));

t.test('GUIDs: mixed-endian on disk, derived ones stable and version 4', async (t) => {
  const g = 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B';
  t.equal(guidToBytes(g).toString('hex'), '28732ac11ff8d211ba4b00a0c93ec93b');
  t.equal(bytesToGuid(guidToBytes(g)), g);
  t.equal(guidFrom('x'), guidFrom('x'));
  t.not(guidFrom('x'), guidFrom('y'));
  t.match(guidFrom('x'), /^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
  t.throws(() => guidToBytes('not-a-guid'), /"not-a-guid": not a GUID/);
});

t.test('a table we write is what sfdisk reads, and what we read back', async (t) => {
  const g = layout(64 * MiB);
  const file = join(dir, 'disk.img');
  execFileSync('truncate', ['-s', `${64 * MiB * SECTOR}`, file]);
  writeDisk(g, file);
  const s = sfdisk(file);
  t.equal(s.label, 'gpt');
  t.equal(s.id, g.diskGuid);
  t.equal(s.firstlba, HEAD_SECTORS);
  t.equal(s.lastlba, 64 * MiB - TAIL_SECTORS - 1);
  t.same(s.partitions.map((p) => [p.start, p.size, p.type, p.uuid, p.name]),
    g.partitions.map((p) => [p.firstLba, p.lastLba - p.firstLba + 1, p.type, p.guid, p.name]));
  t.equal(s.partitions[1]!.attrs, 'RequiredPartition');
  const { head } = encodeGpt(g);
  const back = decodeGpt(head, g.sectors);
  t.same(back.partitions.map(({ attributes, ...p }) => ({ ...p, attributes: attributes ?? 0n })),
    g.partitions.map(({ attributes, ...p }) => ({ ...p, attributes: attributes ?? 0n })));
  t.equal(back.diskGuid, g.diskGuid);
  // sfdisk verifies the backup too: a disk without it is reported.
  t.match(execFileSync('sfdisk', ['--verify', file], { encoding: 'utf8' }), /No errors detected/);
});

t.test('grown to a larger disk: the backup moves to the end and the last partition takes the room', async (t) => {
  const small = layout(64 * MiB);
  const file = join(dir, 'grown.img');
  execFileSync('truncate', ['-s', `${64 * MiB * SECTOR}`, file]);
  writeDisk(small, file);
  execFileSync('truncate', ['-s', `${128 * MiB * SECTOR}`, file]);
  const grown = growGpt(decodeGpt(encodeGpt(small).head, 128 * MiB), 128 * MiB, 'EPHEMERAL');
  writeDisk(grown, file);
  const s = sfdisk(file);
  t.equal(s.lastlba, 128 * MiB - TAIL_SECTORS - 1);
  t.equal(s.partitions[3]!.start + s.partitions[3]!.size - 1, 128 * MiB - TAIL_SECTORS - 1);
  t.match(execFileSync('sfdisk', ['--verify', file], { encoding: 'utf8' }), /No errors detected/);
  t.throws(() => growGpt(small, 32 * MiB, 'EPHEMERAL'), /the disk shrank/);
  t.throws(() => growGpt(small, 128 * MiB, 'STATE'), /"STATE" is not the last partition \("EPHEMERAL" is\)/);
});

t.test('refused: overlaps, partitions outside the usable sectors, long names, corrupted tables', async (t) => {
  const g = layout(64 * MiB);
  const bad = (over: Partial<Gpt['partitions'][number]>, i = 2) => ({
    ...g, partitions: g.partitions.map((p, j) => (j === i ? { ...p, ...over } : p)),
  });
  t.throws(() => encodeGpt(bad({ firstLba: 33 * MiB })), /partition "STATE": overlaps "EFI"/);
  t.throws(() => encodeGpt(bad({ lastLba: 64 * MiB }, 3)), /partition "EPHEMERAL": sectors .* outside the usable/);
  t.throws(() => encodeGpt(bad({ name: 'x'.repeat(37) })), /name longer than 36/);
  const { head } = encodeGpt(g);
  const flipped = Buffer.from(head);
  flipped[SECTOR + 60]! ^= 1;
  t.throws(() => decodeGpt(flipped, g.sectors), /gpt header: header CRC32 does not match/);
  const entry = Buffer.from(head);
  entry[2 * SECTOR + 3]! ^= 1;
  t.throws(() => decodeGpt(entry, g.sectors), /partition entry array CRC32 does not match/);
  t.throws(() => decodeGpt(Buffer.alloc(HEAD_SECTORS * SECTOR), g.sectors), /no "EFI PART" signature/);
  t.equal(head[510], 0x55);
  t.equal(head[511], 0xaa);
  t.equal(head[446 + 4], 0xee, 'protective MBR');
});
