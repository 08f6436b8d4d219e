// aws: the VMDK's random content id replaced by one from the seed, whatever length qemu-img gave it
// (%x: a CID below 0x10000000 has fewer than eight digits), so two builds of one disk are one file.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import {
  closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixVmdkCid } from './aws.ts';

const dir = mkdtempSync(join(tmpdir(), 'aws-'));
const disk = join(dir, 'disk.raw');
writeFileSync(disk, 'a disk');
truncateSync(disk, 4 << 20);
/** A conversion in a folder of its own: the descriptor names the file, so both must have one name. */
const vmdk = (folder: string) => {
  mkdirSync(join(dir, folder));
  const out = join(dir, folder, 'disk.vmdk');
  execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'vmdk', '-o', 'subformat=streamOptimized', disk, out]);
  return out;
};
const descriptor = (file: string) => {
  const b = readFileSync(file);
  const at = Number(b.readBigUInt64LE(28)) * 512;
  return b.toString('latin1', at, b.indexOf(0, at));
};

/** Rewrites the descriptor as qemu-img would have with a short CID: the lines after it move up. */
function withCid(file: string, cid: string): void {
  const b = readFileSync(file);
  const at = Number(b.readBigUInt64LE(28)) * 512;
  const size = Number(b.readBigUInt64LE(36)) * 512;
  const text = descriptor(file).replace(/^CID=\w+$/m, `CID=${cid}`);
  const region = Buffer.alloc(size);
  region.write(text, 'latin1');
  const fd = openSync(file, 'r+');
  writeSync(fd, region, 0, size, at);
  closeSync(fd);
}

t.test('two conversions of one disk, one with a short random id, are one file once fixed', async (t) => {
  const a = vmdk('a');
  const b = vmdk('b');
  withCid(b, '5f3a2');
  t.match(descriptor(b), /^CID=5f3a2$/m);
  fixVmdkCid(a, 'seed');
  fixVmdkCid(b, 'seed');
  t.match(descriptor(a), /^CID=[0-9a-f]{8}$/m);
  t.match(descriptor(a), /createType="streamOptimized"/, 'the rest of the descriptor kept');
  t.same(readFileSync(a), readFileSync(b));
  fixVmdkCid(b, 'another seed');
  t.not(descriptor(b), descriptor(a));
  t.match(execFileSync('qemu-img', ['info', b], { encoding: 'utf8' }), /create type: streamOptimized/, 'still a VMDK');
  writeFileSync(join(dir, 'not.vmdk'), Buffer.alloc(1024));
  t.throws(() => fixVmdkCid(join(dir, 'not.vmdk'), 's'), /not a sparse VMDK/);
});
