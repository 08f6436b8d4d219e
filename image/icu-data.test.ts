import t from 'tap';
import {
  encodeIcuPackage, findIcuPackages, readIcuPackage, shrinkIcuPackage,
} from './icu-data.ts';

const HEADER = 32;
/** A CmnD package as ICU's tools lay it out, `lead` bytes into a file with other bytes around it. */
function file(items: [string, Buffer][], lead = 5, o: { version?: number; bigEndian?: boolean } = {}): Buffer {
  const header = Buffer.alloc(HEADER);
  header.writeUInt16LE(HEADER, 0);
  header[2] = 0xda;
  header[3] = 0x27;
  header.writeUInt16LE(20, 4);
  header[8] = o.bigEndian ? 1 : 0;
  header.write('CmnD', 12, 'latin1');
  header[16] = o.version ?? 1;
  const names = Buffer.concat(items.map(([n]) => Buffer.from(`${n}\0`)));
  const table = Buffer.alloc(4 + 8 * items.length);
  table.writeUInt32LE(items.length, 0);
  const body: Buffer[] = [];
  let nameAt = table.length;
  let at = table.length + names.length;
  items.forEach(([n, data], k) => {
    const gap = (16 - ((lead + HEADER + at) % 16)) % 16;
    body.push(Buffer.alloc(gap));
    at += gap;
    table.writeUInt32LE(nameAt, 4 + 8 * k);
    table.writeUInt32LE(at, 8 + 8 * k);
    nameAt += n.length + 1;
    body.push(data);
    at += data.length;
  });
  return Buffer.concat([Buffer.alloc(lead, 0x77), header, table, names, ...body, Buffer.alloc(64, 0x77)]);
}
const item = (n: number, len: number) => Buffer.alloc(len, n);
const ITEMS: [string, Buffer][] = [
  ['icudt78l/de.res', item(1, 40)], ['icudt78l/en.res', item(2, 33)], ['icudt78l/pool.res', item(3, 100)],
  ['icudt78l/root.res', item(4, 17)], ['icudt78l/zu.res', item(5, 24)],
];

t.test('reads the table: names in order, offsets, sizes up to the next item', async (t) => {
  const bin = file(ITEMS);
  t.same(findIcuPackages(bin), [5]);
  const pkg = readIcuPackage(bin, 5);
  t.same(pkg.items.map((i) => i.name), ITEMS.map(([n]) => n));
  for (const [k, i] of pkg.items.entries()) {
    t.same(bin.subarray(5 + i.offset, 5 + i.offset + ITEMS[k]![1].length), ITEMS[k]![1], `${i.name}'s bytes`);
    t.equal((5 + i.offset) % 16, 0, `${i.name} is 16-byte aligned`);
  }
  t.ok(pkg.items[0]!.size! >= 40, 'a size reaches the next item, padding included');
  t.equal(pkg.items.at(-1)!.size, undefined, 'the last item has no size in the table');
});

t.test('a smaller package: the items kept, their bytes, aligned, and it reads back', async (t) => {
  const bin = file(ITEMS, 3);
  const pkg = readIcuPackage(bin, 3);
  const keep = (n: string) => !n.endsWith('de.res') && !n.endsWith('zu.res');
  const small = encodeIcuPackage(bin, pkg, keep);
  const back = readIcuPackage(Buffer.concat([bin.subarray(0, 3), small, Buffer.alloc(16)]), 3);
  t.same(back.items.map((i) => i.name), ['icudt78l/en.res', 'icudt78l/pool.res', 'icudt78l/root.res']);
  for (const i of back.items) {
    const data = ITEMS.find(([n]) => n === i.name)![1];
    t.same(small.subarray(i.offset, i.offset + data.length), data, `${i.name}'s bytes`);
    t.equal((3 + i.offset) % 16, 0, `${i.name} is aligned where the package starts`);
  }
});

t.test('shrinking in place keeps the file\'s size and what lies around the package, and zeroes the rest', async (t) => {
  const bin = file(ITEMS, 7);
  const before = Buffer.from(bin);
  const pkg = readIcuPackage(bin, 7);
  const r = shrinkIcuPackage(bin, pkg, (n) => n.endsWith('en.res') || n.endsWith('root.res'));
  t.equal(bin.length, before.length);
  t.same(r, { items: 5, kept: 2, bytesBefore: pkg.items.at(-1)!.offset, bytesAfter: r.bytesAfter });
  t.ok(r.bytesAfter < r.bytesBefore);
  t.same(bin.subarray(0, 7), before.subarray(0, 7), 'the bytes before it are untouched');
  const end = 7 + pkg.items.at(-1)!.offset;
  t.same(bin.subarray(end), before.subarray(end), 'from the old last item on, untouched');
  t.ok(bin.subarray(7 + r.bytesAfter, end).every((b) => b === 0), 'what it no longer uses is zero');
  t.same(readIcuPackage(bin, 7).items.map((i) => i.name), ['icudt78l/en.res', 'icudt78l/root.res']);
});

t.test('the last item cannot be kept: its size is unknown', async (t) => {
  const bin = file(ITEMS);
  t.throws(() => encodeIcuPackage(bin, readIcuPackage(bin, 5), () => true), /the last item, icudt78l\/zu\.res/);
});

t.test('refusals name what is wrong and where', async (t) => {
  t.throws(() => readIcuPackage(file(ITEMS, 5, { version: 2 }), 5), /byte 5: format version 2, not 1/);
  t.throws(() => readIcuPackage(file(ITEMS, 5, { bigEndian: true }), 5), /big-endian/);
  t.throws(() => readIcuPackage(Buffer.alloc(64), 0), { name: 'IcuDataError', at: 0 });
  const cut = file(ITEMS).subarray(0, 5 + HEADER + 10);
  t.throws(() => readIcuPackage(cut, 5), /a table of 5 items does not fit/);
  t.same(findIcuPackages(Buffer.concat([file(ITEMS, 0), file(ITEMS, 0)])).length, 2, 'finds each package');
  const magicOnly = Buffer.from('no package here \xda\x27 CmnD', 'latin1');
  t.same(findIcuPackages(magicOnly), [], 'the magic alone is not a package');
});
