// The installer's byte work against real files: the disk streams out of its gzip onto the
// target, checked by both sha256s on the way; damage and truncation are caught; the tail of a
// larger target is cleared of a former backup GPT; the first MiB (the partition table) is written last, so a write
// killed part-way leaves no table; reading back catches a disk that lies.
import t from 'tap';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
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
  await writeImage({ compressed: Readable.from([gz]), target: p, targetBytes: 8 * MiB, source: 'the medium',
    image: manifest.disk,
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
    source: 'the medium', image: manifest.disk, progress: () => {}, dropCache: async () => {} }));
  await t.rejects(writeImage({ compressed: Readable.from([gz.subarray(0, gz.length >> 1)]), target: target('cut'),
    targetBytes: 8 * MiB, source: 'the medium', image: manifest.disk, progress: () => {}, dropCache: async () => {} }),
  /unexpected end of file/);
  t.ok(readFileSync(join(dir, 'cut')).subarray(0, MiB).every((b) => b === 0),
    'a write that failed leaves no head: the first MiB, where the partition table goes, is zeros');
  const wrong = { ...manifest, disk: { ...manifest.disk, sha256: '0'.repeat(64) } };
  await t.rejects(writeImage({ compressed: Readable.from([gz]), target: target('label'), targetBytes: 8 * MiB,
    source: 'the medium', image: wrong.disk, progress: () => {}, dropCache: async () => {} }),
  /the image's sha256 is [0-9a-f]{64}, not 0{64}: the medium is damaged/);
  await t.rejects(writeImage({ compressed: Readable.from([gz]), target: join(dir, 'missing', 'x'),
    targetBytes: 8 * MiB, source: 'the medium', image: manifest.disk, progress: () => {}, dropCache: async () => {} }),
  /cannot open .*missing\/x for writing: ENOENT/);
});

t.test('reading back catches a disk that does not keep what was written', async (t) => {
  const p = target('liar');
  await writeImage({ compressed: createReadStream(writeGz()), target: p, targetBytes: 8 * MiB, source: 'the medium',
    image: manifest.disk,
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
  const dropCache = async () => {
    drops++;
  };
  await writeImage({ compressed: Readable.from([payload.gz]), target: p, targetBytes: 26 * MiB,
    source: 'the medium', image: payload.manifest.disk, progress: () => {}, dropCache });
  t.equal(drops, 3, 'writing 25 MiB: after 8, 16 and 24 MiB');
  drops = 0;
  await verifyImage({ target: p, size: big.length, sha256: payload.manifest.disk.sha256, dropCache,
    progress: () => {} });
  t.equal(drops, 4, 'reading it back: before, then after 8, 16 and 24 MiB');
});

t.test('a write killed part-way leaves a disk with no partition table, never a table over half a system', async (t) => {
  // A real image (GPT, ESP, STATE, EPHEMERAL) streamed slowly by another process, SIGKILLed once bytes past the
  // first MiB are on the target.
  const big = Buffer.concat([randomBytes(MiB), randomBytes(6 * MiB)]);
  const image = join(dir, 'gpt.img');
  writeFileSync(image, big);
  execFileSync('sfdisk', ['-q', image], { input: 'label: gpt\nstart=2048, size=4096, name=STATE\n' });
  const payload = testPayload(readFileSync(image));
  const gzFile = join(dir, 'gpt.img.gz');
  writeFileSync(gzFile, payload.gz);
  const p = target('killed');
  const code = `import { Readable } from 'node:stream';
    import { readFileSync } from 'node:fs';
    import { writeImage } from ${JSON.stringify(new URL('./write-image.ts', import.meta.url).href)};
    const gz = readFileSync(${JSON.stringify(gzFile)});
    // 64 KiB every 20 ms: seconds for the whole, time to be killed in the middle.
    async function* slow() { for (let i = 0; i < gz.length; i += 65536) { yield gz.subarray(i, i + 65536);
      await new Promise((r) => setTimeout(r, 20)); } }
    await writeImage({ compressed: Readable.from(slow()), target: ${JSON.stringify(p)}, targetBytes: ${8 * MiB},
      source: 'the medium', image: ${JSON.stringify(payload.manifest.disk)},
      progress: (n) => { if (n > 3 * ${MiB}) console.log('past'); },
      dropCache: async () => {} });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => {
    if (/past/.test(d.toString())) resolve();
  }));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const out = readFileSync(p);
  t.ok(out.subarray(0, MiB).every((b) => b === 0), 'the first MiB: zeros (no protective MBR, no GPT)');
  t.ok(out.subarray(MiB, 3 * MiB).equals(readFileSync(image).subarray(MiB, 3 * MiB)), 'what followed was written');
  const read = spawnSync('sfdisk', ['--json', p], { encoding: 'utf8' });
  t.notMatch(read.stdout, /partitiontable/, `sfdisk finds no table (${read.stderr.trim()})`);
  await writeImage({ compressed: Readable.from([payload.gz]), target: p, targetBytes: 8 * MiB,
    source: 'the medium', image: payload.manifest.disk, progress: () => {}, dropCache: async () => {} });
  t.match(execFileSync('sfdisk', ['--json', p], { encoding: 'utf8' }), /"name":\s*"STATE"/, 'written again: whole');
});

t.test('a zstd image of unknown size (an upgrade\'s system image): written, its size and sha256 said; too large '
  + 'refused',
  async (t) => {
    const image = join(dir, 'system.img');
    const bytes = Buffer.concat([Buffer.from('hsqs'), randomBytes(2 * MiB)]);
    writeFileSync(image, bytes);
    execFileSync('zstd', ['-q', '-f', image, '-o', `${image}.zst`]);
    const zst = readFileSync(`${image}.zst`);
    const expect = { compression: 'zstd' as const, compressedSize: zst.length,
      compressedSha256: createHash('sha256').update(zst).digest('hex') };
    const p = target('system-b', 4 * MiB);
    const written = await writeImage({ compressed: Readable.from([zst]), target: p, targetBytes: 4 * MiB,
      source: 'the medium', image: expect, progress: () => {}, dropCache: async () => {} });
    t.same(written, { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    t.ok(readFileSync(p).subarray(0, bytes.length).equals(bytes), 'the partition holds the image');
    await verifyImage({ target: p, ...written, dropCache: async () => {}, progress: () => {} });
    const small = target('small', 2 * MiB);
    await t.rejects(writeImage({ compressed: Readable.from([zst]), target: small, targetBytes: 2 * MiB,
      source: 'the medium', image: expect, progress: () => {}, dropCache: async () => {} }),
    /the image is larger than .*small \(2097152 bytes\): it does not fit/);
    t.ok(readFileSync(small).subarray(0, MiB).every((b) => b === 0), 'and the partition has no superblock');
    await t.rejects(writeImage({ compressed: Readable.from([zst]), target: target('wrong', 4 * MiB),
      targetBytes: 4 * MiB, source: 'the medium', image: { ...expect, compressedSha256: '0'.repeat(64) },
      progress: () => {},
      dropCache: async () => {} }), /the compressed image's sha256 is \w+, not 0{64}: the medium is damaged/);
  });
