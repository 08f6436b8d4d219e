// Layers made here, unpacked into real directories: what the two passes write (hard links as one file, empty files,
// a directory without write permission filled, links last), and the limits that stop a layer that would not end.
import t from 'tap';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { tarOf } from './test-registry.ts';
import { unpackLayers, type LayerSource } from './unpack.ts';

const scratch = mkdtempSync(join(tmpdir(), 'unpack-test-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(scratch, `root-${n++}`);

const diffId = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const layer = (tar: Buffer, i = 0): LayerSource => ({
  what: `layer ${i}`, compression: 'gzip', diffId: diffId(tar), open: () => Readable.from([gzipSync(tar)]),
});

t.test('hard links are one file; empty files, closed directories, links and modes as the layers say', async (t) => {
  const first = await tarOf([
    { header: { name: 'bin/busybox', type: 'file', mode: 0o755 }, data: 'BB' },
    { header: { name: 'bin/ls', type: 'link', linkname: 'bin/busybox' } },
    { header: { name: 'etc/empty', type: 'file', mode: 0o600 } },
    { header: { name: 'sealed', type: 'directory', mode: 0o555 } },
    { header: { name: 'sealed/inside', type: 'file', mode: 0o444 }, data: 'in' },
    { header: { name: 'sh', type: 'symlink', linkname: 'bin/busybox' } },
  ]);
  const second = await tarOf([{ header: { name: 'bin/busybox', type: 'file', mode: 0o755 }, data: 'NEW' }]);
  const root = fresh();
  const out = await unpackLayers([layer(first, 0), layer(second, 1)], root);
  t.equal(readFileSync(join(root, 'bin/busybox'), 'utf8'), 'NEW', 'the later layer wins');
  t.equal(readFileSync(join(root, 'bin/ls'), 'utf8'), 'BB', 'a hard link keeps what it linked to');
  t.equal(readFileSync(join(root, 'etc/empty'), 'utf8'), '');
  t.equal(lstatSync(join(root, 'etc/empty')).mode & 0o7777, 0o600);
  t.equal(readFileSync(join(root, 'sealed/inside'), 'utf8'), 'in');
  t.equal(lstatSync(join(root, 'sealed')).mode & 0o7777, 0o555, 'filled, then closed');
  t.equal(readlinkSync(join(root, 'sh')), 'bin/busybox');
  t.equal(out.bytes, 'NEW'.length + 'BB'.length + 'in'.length);

  const linked = await tarOf([
    { header: { name: 'a', type: 'file', mode: 0o644 }, data: 'same' },
    { header: { name: 'b', type: 'link', linkname: 'a' } },
  ]);
  const r2 = fresh();
  await unpackLayers([layer(linked)], r2);
  t.equal(lstatSync(join(r2, 'a')).ino, lstatSync(join(r2, 'b')).ino, 'written once, linked');
});

t.test('limits: a layer larger than allowed stops as it streams; so do too many entries', async (t) => {
  const big = await tarOf([{ header: { name: 'zeros', type: 'file', mode: 0o644 }, data: Buffer.alloc(1 << 20) }]);
  await t.rejects(unpackLayers([layer(big)], fresh(), { maxBytes: 64 << 10, maxEntries: 10 }),
    { name: 'LayersRefused', message: /layer 0: more than 65536 bytes uncompressed/ });
  const names = Array.from({ length: 20 }, (_, i) => `f${i}`);
  const many = await tarOf(names.map((name) => ({ header: { name, type: 'file' as const } })));
  await t.rejects(unpackLayers([layer(many)], fresh(), { maxBytes: 1 << 20, maxEntries: 10 }),
    { name: 'LayersRefused', message: /more than 10 entries/ });
});

t.test('refused: another diff_id, bytes not gzip, bytes not tar; a source\'s own error', async (t) => {
  const tar = await tarOf([{ header: { name: 'x', type: 'file' }, data: 'x' }]);
  await t.rejects(unpackLayers([{ ...layer(tar), diffId: diffId(Buffer.from('other')) }], fresh()),
    { message: /layer 0: does not match the config's diff_id/ });
  await t.rejects(unpackLayers([{ ...layer(tar), open: () => Readable.from([Buffer.from('plain text')]) }], fresh()),
    { message: /layer 0: does not decompress as gzip/ });
  const notTar = Buffer.alloc(1024, 7);
  await t.rejects(unpackLayers([layer(notTar)], fresh()), { name: 'LayersRefused', message: /layer 0: not a tar/ });
  const broken = new Error('read ECONNRESET');
  const failing = () => new Readable({
    read() {
      this.destroy(broken);
    },
  });
  await t.rejects(unpackLayers([{ ...layer(tar), open: failing }], fresh()), broken);
});
