// The installer's kernel calls, which the addon runs on the thread pool (PID 1 serves the API meanwhile): real
// loop devices (needs root). BLKFLSBUF, run before the disk is read back: bytes changed in the file behind the
// device's back are seen through the device only once its cache is dropped. BLKRRPART. mount, umount2 and sync on
// a filesystem.
// Each rejects with the errno Error the synchronous calls throw, naming its input.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import {
  closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, writeFileSync, writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';

const readAt = (device: string, length: number): Buffer => {
  const fd = openSync(device, 'r');
  try {
    const b = Buffer.alloc(length);
    readSync(fd, b, 0, length, 0);
    return b;
  } finally {
    closeSync(fd);
  }
};

const has = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

if (process.getuid?.() !== 0 || !existsSync('/dev/loop-control') || !has('mkfs.ext4')) {
  t.test('needs root, loop devices and mkfs.ext4', async (t) => {
    t.plan(0, 'not here');
  });
} else {
  const n = native();
  const scratch = mkdtempSync(join(tmpdir(), 'installer-kernel-'));
  const loopOf = (t: Test, file: string, ...flags: string[]) => {
    const loop = execFileSync('losetup', [...flags, '--find', '--show', file], { encoding: 'utf8' }).trim();
    t.teardown(() => execFileSync('losetup', ['-d', loop]));
    return loop;
  };

  t.test('flushBuffers drops the device\'s cached pages: the next read is the device\'s', async (t) => {
    const file = join(scratch, 'disk.img');
    writeFileSync(file, Buffer.alloc(1 << 20, 'a'));
    const loop = loopOf(t, file);
    // Held open throughout: the kernel drops a block device's cache at its last close anyway.
    const held = openSync(loop, 'r');
    t.teardown(() => closeSync(held));
    t.equal(readAt(loop, 4).toString(), 'aaaa', 'read once: now in the device\'s cache');
    const fd = openSync(file, 'r+');
    try {
      writeSync(fd, Buffer.from('bbbb'), 0, 4, 0);
    } finally {
      closeSync(fd);
    }
    t.equal(readAt(loop, 4).toString(), 'aaaa', 'the cache still answers');
    const flushing = n.flushBuffers(loop);
    t.type(flushing, Promise, 'an answer to wait for, not a call that waits');
    await flushing;
    t.equal(readAt(loop, 4).toString(), 'bbbb', 'after flushBuffers, the device does');
    await t.rejects(n.flushBuffers(file), { code: 'ENOTTY', syscall: 'ioctl', message: /ioctl BLKFLSBUF .*disk\.img/ },
      'a file is no block device: the error names it');
    await t.rejects(n.flushBuffers(join(scratch, 'none')), { code: 'ENOENT', syscall: 'open', message: /none/ });
    t.throws(() => n.flushBuffers(42 as unknown as string), TypeError, 'not a path: refused at once, nothing queued');
  });

  // What the kernel then finds is checked in QEMU (the installs find STATE after it): this host's kernel may read no
  // partition tables at all (CONFIG_EFI_PARTITION and CONFIG_MSDOS_PARTITION unset here).
  t.test('rereadPartitions asks a disk\'s kernel to read its table again, and names what refused', async (t) => {
    const file = join(scratch, 'table.img');
    writeFileSync(file, Buffer.alloc(8 << 20));
    const loop = loopOf(t, file, '--partscan');
    await t.resolves(n.rereadPartitions(loop), 'a disk whose partitions are not in use');
    await t.rejects(n.rereadPartitions(file), { code: 'ENOTTY', message: /BLKRRPART .*table\.img/ },
      'a file is no disk');
  });

  t.test('mountAsync, umount2Async and syncAsync: a filesystem mounted, written, synced and let go', async (t) => {
    const file = join(scratch, 'fs.img');
    writeFileSync(file, Buffer.alloc(16 << 20));
    execFileSync('mkfs.ext4', ['-q', '-F', file]);
    const loop = loopOf(t, file);
    const dir = join(scratch, 'mnt');
    mkdirSync(dir);
    await n.mountAsync(loop, dir, 'ext4', 0);
    writeFileSync(join(dir, 'kept'), 'written through the mount');
    await n.syncAsync();
    await n.umount2Async(dir);
    t.notOk(existsSync(join(dir, 'kept')), 'unmounted: the file is on the filesystem, not in the directory');
    await n.mountAsync(loop, dir, 'ext4', 1 /* MS_RDONLY */);
    t.equal(readFileSync(join(dir, 'kept'), 'utf8'), 'written through the mount', 'and there once mounted again');
    await n.umount2Async(dir);
    await t.rejects(n.mountAsync(file, dir, 'nosuchfs', 0), { code: 'ENODEV', syscall: 'mount',
      message: /mount nosuchfs .*fs\.img on .*mnt/ }, 'an unknown filesystem type: the error names the mount');
    t.throws(() => n.mount(file, dir, 'nosuchfs', 0), { code: 'ENODEV', syscall: 'mount',
      message: /mount nosuchfs .*fs\.img on .*mnt/ }, 'the synchronous mount, the same call: the same error');
    await t.rejects(n.umount2Async(dir), { code: 'EINVAL', syscall: 'umount2', message: /umount2 .*mnt/ },
      'nothing mounted there');
  });
}
