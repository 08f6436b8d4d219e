// The storage plugin's controllers against the real kernel (needs root): a loop
// device gives a real block device and real uevents; mounts happen in a private
// mount namespace.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { addFinalizer, removeFinalizer } from '../../cosi/state/finalizers.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { blockDeviceStatusController } from './block-device-status.ts';
import { mountMergeController } from './mount-merge.ts';
import { mountOptions, mountSpecController, nativeMountKernel } from './mount-spec.ts';
import {
  BLOCK_DEVICE_TYPE, MOUNT_SPEC_TYPE, MOUNT_SPEC_STATUS_TYPE, STORAGE_NS,
} from '../../proto/gen/resource-types.ts';

t.test('mount options split into flags and data', async (t) => {
  t.same(mountOptions(['ro', 'noexec', 'errors=remount-ro', 'defaults']), { flags: 1 | 8, data: 'errors=remount-ro' });
});

if (process.getuid?.() !== 0 || !existsSync('/dev/loop-control')) {
  t.test('needs root and loop devices', async (t) => {
    t.plan(0, 'needs root and /dev/loop-control');
  });
} else {
  const n = native();
  n.unshareMounts();
  const dir = mkdtempSync(join(tmpdir(), 'storage-'));
  const content = join(dir, 'content');
  mkdirSync(content);
  writeFileSync(join(content, 'hello.txt'), 'hello from the disk\n');
  const label = `t${process.pid}`.slice(0, 15);
  const img = join(dir, 'disk.img');
  execFileSync('truncate', ['-s', '16M', img]);
  execFileSync('mke2fs', ['-q', '-t', 'ext4', '-L', label, '-d', content, img]);

  const h = await controllerHarness(t, [
    blockDeviceStatusController(() => n), mountMergeController(), mountSpecController(nativeMountKernel(() => n)),
  ], {
    codecs: builtinCodecs(builtinTypes()),
  });
  const { state, until } = h;
  let loop = '';
  t.teardown(() => {
    if (loop) execFileSync('losetup', ['-d', loop]);
  });
  const dev = (name: string) => h.spec({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, id: name });
  const mstatus = (id: string) =>
    h.spec<Record<string, string>>({ namespace: STORAGE_NS, type: MOUNT_SPEC_STATUS_TYPE, id });
  const target = join(dir, 'mnt', 'data');

  t.test('an attached disk appears within a second, with its filesystem', async (t) => {
    await until(async () => (await state.list({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE })).length > 0, true);
    const t0 = performance.now();
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    const name = loop.replace('/dev/', '');
    t.equal(await until(async () => (await dev(name))?.label, label, 1000), label, `${name} labelled ${label}`);
    t.ok(performance.now() - t0 < 1000, `seen in ${(performance.now() - t0).toFixed(0)} ms (uevent)`);
    t.match(await dev(name), { fstype: 'ext4', sizeBytes: 16 * 1024 * 1024, devPath: loop });
  });

  t.test('a MountSpec by LABEL mounts it; the file reads back', async (t) => {
    await h.create({ namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE, id: 'data' }, {
      source: `LABEL=${label}`, target, options: ['nodev', 'noexec'],
    });
    t.equal(await until(async () => (await mstatus(target))?.state, 'applied'), 'applied');
    t.match(await mstatus(target), { device: loop, fstype: 'ext4', layer: 'config', applied: { device: loop, target } },
      'what is mounted, as data');
    t.equal(readFileSync(join(target, 'hello.txt'), 'utf8'), 'hello from the disk\n');
    t.match(readFileSync('/proc/self/mounts', 'utf8'), new RegExp(`${loop} ${target} ext4 [^ ]*nodev,noexec`));
  });

  t.test('a missing device shows in the status', async (t) => {
    const ghost = join(dir, 'mnt', 'ghost');
    await h.create({ namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE, id: 'ghost' }, {
      source: 'LABEL=no-such-disk', target: ghost,
    });
    t.equal(await until(async () => (await mstatus(ghost))?.state, 'pending'), 'pending');
    t.match((await mstatus(ghost))?.error, /no block device matches LABEL=no-such-disk/);
  });

  t.test('a dependant holding the status delays the unmount', async (t) => {
    const status = { namespace: STORAGE_NS, type: MOUNT_SPEC_STATUS_TYPE, id: target };
    await addFinalizer(state, status, 'dependant');
    let gone = false;
    const destroying = state.teardownAndDestroy({ namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE, id: 'data' })
      .then(() => { gone = true; });
    await new Promise((r) => setTimeout(r, 300));
    t.notOk(gone, 'the spec waits');
    t.ok(existsSync(join(target, 'hello.txt')), 'still mounted while held');
    await removeFinalizer(state, status, 'dependant');
    await destroying;
    t.notOk(readFileSync('/proc/self/mounts', 'utf8').includes(` ${target} `), 'unmounted');
    t.equal(await mstatus(target), undefined, 'status gone');
  });

  t.test('a detached disk disappears', async (t) => {
    const name = loop.replace('/dev/', '');
    execFileSync('losetup', ['-d', loop]);
    loop = '';
    t.equal(await until(async () => dev(name), undefined, 1000), undefined);
  });
}
