// superblock probing on images the real mkfs tools made.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extGeometry, probe, PROBE_BYTES } from './superblock.ts';

const dir = mkdtempSync(join(tmpdir(), 'sb-'));
const head = (file: string) => {
  const b = Buffer.alloc(PROBE_BYTES);
  const fd = openSync(file, 'r');
  const n = readSync(fd, b, 0, b.length, 0);
  closeSync(fd);
  return b.subarray(0, n);
};
const image = (name: string, mb: number) => {
  const f = join(dir, name);
  execFileSync('truncate', ['-s', `${mb}M`, f]);
  return f;
};

t.test('ext4 made by mke2fs -d: type, label, uuid', async (t) => {
  const content = join(dir, 'content');
  mkdirSync(content);
  writeFileSync(join(content, 'hello.txt'), 'hi');
  const f = image('ext4.img', 8);
  execFileSync('mke2fs', [
    '-q', '-t', 'ext4', '-L', 'appdata', '-U', '11111111-2222-3333-4444-555555555555', '-d', content, f,
  ]);
  t.same(probe(head(f)), { fstype: 'ext4', label: 'appdata', uuid: '11111111-2222-3333-4444-555555555555' });
  const e2 = image('ext2.img', 4);
  execFileSync('mke2fs', ['-q', '-t', 'ext2', e2]);
  t.equal(probe(head(e2))?.fstype, 'ext2');
  // dumpe2fs, an independent reader, says the same size.
  const dump = execFileSync('dumpe2fs', ['-h', f], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  t.same(extGeometry(head(f)), {
    blockSize: Number(/^Block size:\s+(\d+)/m.exec(dump)![1]), blocks: Number(/^Block count:\s+(\d+)/m.exec(dump)![1]),
  });
  t.equal(extGeometry(Buffer.alloc(4096)), null);
});

t.test('vfat (FAT16 and FAT32) with label and volume id', async (t) => {
  const f16 = image('fat16.img', 16);
  execFileSync('mkfs.vfat', ['-F', '16', '-n', 'CIDATA', '-i', 'a1b2c3d4', f16]);
  t.same(probe(head(f16)), { fstype: 'vfat', label: 'CIDATA', uuid: 'A1B2-C3D4' });
  const f32 = image('fat32.img', 40);
  execFileSync('mkfs.vfat', ['-F', '32', '-n', 'EFI', f32]);
  t.match(probe(head(f32)), { fstype: 'vfat', label: 'EFI' });
});

t.test('iso9660 made by xorriso', async (t) => {
  const content = join(dir, 'seed');
  mkdirSync(content);
  writeFileSync(join(content, 'user-data'), '#cloud-config\n');
  const f = join(dir, 'seed.iso');
  execFileSync('xorriso', ['-as', 'mkisofs', '-quiet', '-V', 'cidata', '-J', '-r', '-o', f, content], {
    stdio: 'ignore',
  });
  t.same(probe(head(f)), { fstype: 'iso9660', label: 'cidata' });
});

t.test('nothing recognisable', async (t) => {
  t.equal(probe(Buffer.alloc(PROBE_BYTES)), null);
  t.equal(probe(Buffer.alloc(10)), null, 'short reads are fine');
});
