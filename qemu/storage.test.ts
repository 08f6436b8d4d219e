// Whole-system test of the storage and system plugins: a second virtio disk (ext4
// made here with mke2fs -d) mounted by a MountSpec and its file read back, a disk
// hot-plugged and unplugged through QMP, a sysctl set and read back, then a clean
// power-off with the filesystems unmounted.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi } from './api-vm.ts';

const dir = mkdtempSync(join(tmpdir(), 'vm-disks-'));
const content = join(dir, 'content');
mkdirSync(content);
writeFileSync(join(content, 'hello.txt'), 'hello from the second disk\n');
const data = join(dir, 'data.img');
execFileSync('truncate', ['-s', '16M', data]);
execFileSync('mke2fs', ['-q', '-t', 'ext4', '-L', 'appdata', '-d', content, data]);
const hot = join(dir, 'hot.img');
execFileSync('truncate', ['-s', '16M', hot]);
execFileSync('mkfs.vfat', ['-n', 'HOTDISK', hot], { stdio: 'ignore' });

const { vm, run, poll, awaitPlugins } = await bootWithApi({
  disks: [{ file: data, format: 'raw' }], append: ['appliance.test.plugins'],
});
t.teardown(() => vm.kill());
// Disks and mounts are the storage plugin's, the guest's files read through test-reader: both of the second wave.
await awaitPlugins(['storage', 'test-reader']);

t.test('the second disk is a BlockDevice with its filesystem', async (t) => {
  const r = await poll(['get', 'disks', 'vda', '-o', 'json'], /appdata/);
  t.match(JSON.parse(r.out), {
    spec: { fstype: 'ext4', label: 'appdata', sizeBytes: 16 * 1024 * 1024, devPath: '/dev/vda' },
  });
});

t.test('a MountSpec mounts it by label and the file reads back', async (t) => {
  const a = await run(
    ['apply', '-f', '-'],
    'metadata: {type: mountspec, id: data}\n'
      + 'spec: {source: LABEL=appdata, target: /var/mnt/data, options: [nodev, noexec]}\n',
  );
  t.equal(a.code, 0, a.err);
  t.match(
    (await poll(['get', 'mountspecstatus', '/var/mnt/data'], /applied/)).out,
    /\/var\/mnt\/data\s+\d+\s+\/var\/mnt\/data\s+applied\s+\/dev\/vda\s+ext4/,
  );
  await run(
    ['apply', '-f', '-'], 'metadata: {type: testfileread, id: hello}\nspec: {path: /var/mnt/data/hello.txt}\n',
  );
  t.match(
    (await poll(['get', 'testfilecontent', 'hello', '-o', 'yaml'], /hello from/)).out,
    /content: \|?\s*hello from the second disk/,
  );
  const bad = await run(
    ['apply', '-f', '-'],
    'metadata: {type: mountspec, id: missing}\nspec: {source: LABEL=nothing, target: /var/mnt/missing}\n',
  );
  t.equal(bad.code, 0);
  t.match(
    (await poll(['get', 'mountspecstatus', '/var/mnt/missing'],
      /pending/)).out, /no block device matches LABEL=nothing/,
  );
});

t.test('a disk hot-plugged through QMP appears, and goes on unplug', async (t) => {
  await vm.hotplugDisk('hot', hot);
  t.match((await poll(['get', 'disks'], /HOTDISK/)).out, /vdb\s+\d+\s+16777216\s+vfat\s+HOTDISK/);
  await vm.unplugDisk('hot');
  const gone = await poll(['get', 'disks'], /^(?![\s\S]*HOTDISK)/);
  t.notMatch(gone.out, /HOTDISK/, 'unplugged disk no longer listed');
});

t.test('a sysctl is set and read back; a bad key says so', async (t) => {
  await run(
    ['apply', '-f', '-'],
    'metadata: {type: sysctl, id: net.ipv4.ip_forward}\nspec: {value: "1"}\n---\n'
      + 'metadata: {type: sysctl, id: kernel.no_such_knob}\nspec: {value: "1"}\n',
  );
  t.match((await poll(['get', 'kernelparamspecstatus', 'net.ipv4.ip_forward'], /applied/)).out, /applied\s+1/);
  t.match(
    (await poll(['get', 'kernelparamspecstatus', 'kernel.no_such_knob'], /error/)).out, /unknown kernel parameter/,
  );
});

t.test('power-off unmounts the filesystems and QEMU exits 0', async (t) => {
  const exit = await vm.powerdown(60_000);
  t.ok(exit.clean, 'QEMU exited by itself');
  t.equal(exit.code, 0);
  t.match(vm.console(), /unmounted (\d+) filesystem/);
  const n = Number(/unmounted (\d+) filesystem/.exec(vm.console())![1]);
  t.ok(n >= 10, `the data disk too (${n} unmounted)`);
  t.notMatch(vm.console(), /Kernel panic|uncaught exception/);
});
