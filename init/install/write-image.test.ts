// The installer's byte work against real files: the disk streams out of its gzip onto the
// target, checked by both sha256s on the way; damage and truncation are caught; the tail of a
// larger target is cleared of a former backup GPT; reading back catches a disk that lies.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { testPayload } from './testing/payload.ts';
import { verifyImage, writeImage } from './write-image.ts';

const MiB = 1 << 20;
const dir = mkdtempSync(join(tmpdir(), 'write-image-'));
const disk = Buffer.concat([randomBytes(MiB), Buffer.alloc(2 * MiB), randomBytes(512)]);
const { gz, manifest } = testPayload(disk);
const target = (name: string, bytes = 8 * MiB) => {
  const p = join(dir, name);
  writeFileSync(p, Buffer.alloc(bytes, 0xaa)); // a disk that held something
  return p;
};

t.test('the disk is written whole, progress heard, and the last MiB of a larger target cleared', async (t) => {
  const p = target('good');
  const seen: number[] = [];
  await writeImage({ compressed: Readable.from([gz]), target: p, targetBytes: 8 * MiB, manifest,
    progress: (n) => seen.push(n), dropCache: async () => {} });
  const out = readFileSync(p);
  t.same(out.subarray(0, disk.length), disk, 'the disk, byte for byte');
  t.ok(out.subarray(disk.length, 7 * MiB).every((b) => b === 0xaa), 'between: untouched');
  t.ok(out.subarray(7 * MiB).every((b) => b === 0), 'the tail, where a backup GPT would be: zeros');
  t.equal(seen.at(-1), disk.length);
  t.ok(seen.length > 1, 'progress heard as it goes');
  await verifyImage({ target: p, size: disk.length, sha256: manifest.disk.sha256, dropCache: async () => {},
    progress: () => {} });
});

t.test('a damaged, truncated or mislabelled payload fails and says what did not match', async (t) => {
  const flipped = Buffer.from(gz);
  flipped[gz.length - 12]! ^= 0xff; // in the deflate data's end or the trailer: gunzip or the sha256 notices
  await t.rejects(writeImage({ compressed: Readable.from([flipped]), target: target('flip'), targetBytes: 8 * MiB,
    manifest, progress: () => {}, dropCache: async () => {} }));
  await t.rejects(writeImage({ compressed: Readable.from([gz.subarray(0, gz.length >> 1)]), target: target('cut'),
    targetBytes: 8 * MiB, manifest, progress: () => {}, dropCache: async () => {} }), /unexpected end of file/);
  const wrong = { ...manifest, disk: { ...manifest.disk, sha256: '0'.repeat(64) } };
  await t.rejects(writeImage({ compressed: Readable.from([gz]), target: target('label'), targetBytes: 8 * MiB,
    manifest: wrong, progress: () => {}, dropCache: async () => {} }),
  /the disk's sha256 is [0-9a-f]{64}; the manifest says 0{64}: the medium or the download is damaged/);
  await t.rejects(writeImage({ compressed: Readable.from([gz]), target: join(dir, 'missing', 'x'),
    targetBytes: 8 * MiB, manifest, progress: () => {}, dropCache: async () => {} }),
  /cannot open .*missing\/x for writing: ENOENT/);
});

t.test('reading back catches a disk that does not keep what was written', async (t) => {
  const p = target('liar');
  await writeImage({ compressed: createReadStream(writeGz()), target: p, targetBytes: 8 * MiB, manifest,
    progress: () => {}, dropCache: async () => {} });
  let dropped = false;
  const b = readFileSync(p);
  b[MiB + 5] = 1;
  writeFileSync(p, b);
  await t.rejects(verifyImage({ target: p, size: disk.length, sha256: manifest.disk.sha256,
    dropCache: async () => { dropped = true; }, progress: () => {} }),
  /read back, its sha256 is [0-9a-f]{64}, not the [0-9a-f]{64} written/);
  t.ok(dropped, 'the page cache is dropped before reading back');
});

function writeGz(): string {
  const p = join(dir, 'payload.gz');
  writeFileSync(p, gz);
  return p;
}

t.test('the target\'s cached pages are dropped as it is written and read back, not only once', async (t) => {
  const big = Buffer.concat([randomBytes(MiB), Buffer.alloc(24 * MiB)]);
  const payload = testPayload(big);
  const p = target('big', 26 * MiB);
  let drops = 0;
  const dropCache = async () => { drops++; };
  await writeImage({ compressed: Readable.from([payload.gz]), target: p, targetBytes: 26 * MiB,
    manifest: payload.manifest, progress: () => {}, dropCache });
  t.equal(drops, 3, 'writing 25 MiB: after 8, 16 and 24 MiB');
  drops = 0;
  await verifyImage({ target: p, size: big.length, sha256: payload.manifest.disk.sha256, dropCache,
    progress: () => {} });
  t.equal(drops, 4, 'reading it back: before, then after 8, 16 and 24 MiB');
});
