// BLKFLSBUF, which the installer runs before it reads the disk back: the device's cached pages go, so a read
// gets what the device holds (needs root and loop devices). A loop device over a file shows it: bytes changed
// in the file behind the device's back are seen through the device only once its cache is dropped.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';

const readAt = (device: string, length: number): Buffer => {
  const fd = openSync(device, 'r');
  try { const b = Buffer.alloc(length); readSync(fd, b, 0, length, 0); return b; } finally { closeSync(fd); }
};

if (process.getuid?.() !== 0 || !existsSync('/dev/loop-control')) {
  t.test('needs root and loop devices', async (t) => { t.plan(0, 'needs root and /dev/loop-control'); });
} else {
  t.test('flushBuffers drops the device\'s cached pages: the next read is the device\'s', async (t) => {
    const n = native();
    const file = join(mkdtempSync(join(tmpdir(), 'flush-buffers-')), 'disk.img');
    writeFileSync(file, Buffer.alloc(1 << 20, 'a'));
    const loop = execFileSync('losetup', ['--find', '--show', file], { encoding: 'utf8' }).trim();
    t.teardown(() => execFileSync('losetup', ['-d', loop]));
    // Held open throughout: the kernel drops a block device's cache at its last close anyway.
    const held = openSync(loop, 'r');
    t.teardown(() => closeSync(held));
    t.equal(readAt(loop, 4).toString(), 'aaaa', 'read once: now in the device\'s cache');
    const fd = openSync(file, 'r+');
    try { writeSync(fd, Buffer.from('bbbb'), 0, 4, 0); } finally { closeSync(fd); }
    t.equal(readAt(loop, 4).toString(), 'aaaa', 'the cache still answers');
    n.flushBuffers(loop);
    t.equal(readAt(loop, 4).toString(), 'bbbb', 'after flushBuffers, the device does');
    t.throws(() => n.flushBuffers(file), { code: 'ENOTTY', message: /ioctl BLKFLSBUF .*disk\.img/ },
      'a file is no block device: the error names it');
  });
}
