// A squashfs image mounted through a loop device on the real kernel (root): read-only, no setuid,
// no device files; the loop device detaches by itself once the mount is gone, and a file that is
// no squashfs fails to mount without leaving a device behind. A directory (an unpacked OCI image) is bound with the
// same flags.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { MNT_DETACH, parseMounts } from './mount-table.ts';
import { mountImage, mountSquashfsImage } from './image-mount.ts';

if (process.getuid?.() !== 0 || !existsSync('/dev/loop-control')) {
  t.plan(0, 'needs root and /dev/loop-control (loop devices)');
} else {
  await loopTests();
}

async function loopTests(): Promise<void> {
  const n = native();
  const dir = mkdtempSync(join(tmpdir(), 'image-mount-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tree = join(dir, 'tree');
  mkdirSync(join(tree, 'bin'), { recursive: true });
  writeFileSync(join(tree, 'manifest.yaml'), 'name: hello\n');
  writeFileSync(join(tree, 'bin', 'tool'), '#!/bin/sh\necho hi\n');
  chmodSync(join(tree, 'bin', 'tool'), 0o4755); // setuid in the image: must not count once mounted
  const image = join(dir, 'hello.squashfs');
  execFileSync('mksquashfs', [tree, image, '-quiet', '-noappend', '-comp', 'zstd']);
  const backing = (device: string) => {
    const f = `/sys/block/${device.replace('/dev/', '')}/loop/backing_file`;
    return existsSync(f) ? readFileSync(f, 'utf8').trim() : undefined;
  };

  t.test('mounted read-only, nosuid, nodev; the loop device goes with the mount', async (t) => {
    const target = join(dir, 'mnt');
    mkdirSync(target);
    const device = mountSquashfsImage(n, image, target);
    let mounted = true;
    t.teardown(() => {
      if (mounted) n.umount2(target, MNT_DETACH);
    }); // an assertion that throws leaves none
    t.match(device, /^\/dev\/loop\d+$/);
    t.equal(backing(device), image, 'the device is a view of the image');
    t.equal(readFileSync(join(target, 'manifest.yaml'), 'utf8'), 'name: hello\n');
    const m = parseMounts(readFileSync('/proc/self/mounts', 'utf8')).find((x) => x.target === target);
    t.match(m, { source: device, fstype: 'squashfs' });
    for (const o of ['ro', 'nosuid', 'nodev']) t.ok(m?.options.split(',').includes(o), o);
    t.throws(() => writeFileSync(join(target, 'x'), 'x'), { code: 'EROFS' });
    n.umount2(target, MNT_DETACH);
    mounted = false;
    for (let i = 0; i < 50 && backing(device) !== undefined; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(backing(device), undefined, 'detached once unmounted (autoclear)');
  });

  t.test('not a squashfs: the mount fails naming it; no loop device is left', async (t) => {
    const bogus = join(dir, 'bogus.squashfs');
    writeFileSync(bogus, Buffer.alloc(8192, 1));
    const target = join(dir, 'mnt-bogus');
    mkdirSync(target);
    t.throws(() => mountSquashfsImage(n, bogus, target),
      { syscall: 'mount', message: new RegExp(`squashfs /dev/loop\\d+ on ${target}`) });
    // udev may probe the device a moment before it goes: asked again for a second.
    let left = execFileSync('losetup', ['-j', bogus]).toString();
    for (let i = 0; i < 50 && left; i++) {
      await new Promise((r) => setTimeout(r, 20));
      left = execFileSync('losetup', ['-j', bogus]).toString();
    }
    t.equal(left, '', 'no loop device holds the file');
    t.throws(() => mountSquashfsImage(n, join(dir, 'missing'), target), { code: 'ENOENT', syscall: 'open' });
  });

  t.test('a directory is bound read-only, nosuid, nodev; the directory itself stays writable for root', async (t) => {
    const target = join(dir, 'mnt-dir');
    mkdirSync(target);
    mountImage(n, tree, target);
    t.teardown(() => n.umount2(target, MNT_DETACH));
    t.equal(readFileSync(join(target, 'manifest.yaml'), 'utf8'), 'name: hello\n');
    const m = parseMounts(readFileSync('/proc/self/mounts', 'utf8')).filter((x) => x.target === target).at(-1);
    for (const o of ['ro', 'nosuid', 'nodev']) t.ok(m?.options.split(',').includes(o), o);
    t.throws(() => writeFileSync(join(target, 'x'), 'x'), { code: 'EROFS' });
    t.doesNotThrow(() => writeFileSync(join(tree, 'x'), 'x'), 'the bind is read-only, not its source');
  });
}
