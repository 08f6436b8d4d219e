// Both listings of the block devices, read from this host's own /sys/class/block and /dev: the synchronous one
// (boot, plugins) and the one through the thread pool (the installer, while PID 1 serves the API) agree.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listBlockDevices, listBlockDevicesAsync } from './sysfs-block.ts';

t.test('listBlockDevicesAsync finds what listBlockDevices finds, probes included', async (t) => {
  if (process.getuid?.() === 0 && existsSync('/dev/loop-control')) {
    // One device whose superblock says something: an ext4 with a label.
    const file = join(mkdtempSync(join(tmpdir(), 'sysfs-block-')), 'fs.img');
    writeFileSync(file, Buffer.alloc(8 << 20));
    execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'PROBED', file]);
    const loop = execFileSync('losetup', ['--find', '--show', file], { encoding: 'utf8' }).trim();
    t.teardown(() => execFileSync('losetup', ['-d', loop]));
    const name = loop.replace('/dev/', '');
    t.match((await listBlockDevicesAsync()).get(name), { devPath: loop, fstype: 'ext4', label: 'PROBED' });
  }
  // Loop devices left out: other test files attach and detach theirs meanwhile.
  const fixed = (m: Map<string, unknown>) => new Map([...m].filter(([name]) => !/^loop\d+/.test(name)));
  const sync = fixed(listBlockDevices());
  t.ok(sync.size > 0, 'this host has block devices');
  t.same(fixed(await listBlockDevicesAsync()), sync);
});

t.test('a device that cannot be read or described is that device\'s status, never a thrown error', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sysfs-fake-'));
  const sys = join(root, 'sys');
  const dev = join(root, 'dev');
  mkdirSync(dev);
  const disk = (name: string, sectors: string) => {
    mkdirSync(join(sys, name), { recursive: true });
    writeFileSync(join(sys, name, 'size'), sectors);
    writeFileSync(join(sys, name, 'dev'), '8:0');
  };
  // Real failures of real calls: a node that is a symlink to itself (ELOOP), one that is a directory (EISDIR),
  // a sysfs entry whose size attribute cannot be read (EISDIR too), and one good disk beside them.
  disk('sda', '16');
  symlinkSync(join(dev, 'sda'), join(dev, 'sda'));
  disk('sdb', '16');
  mkdirSync(join(dev, 'sdb'));
  mkdirSync(join(sys, 'sdc', 'size'), { recursive: true });
  disk('vda', String((8 << 20) / 512));
  writeFileSync(join(dev, 'vda'), Buffer.alloc(8 << 20));
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'GOOD', join(dev, 'vda')]);
  for (const [how, list] of [['sync', listBlockDevices(sys, dev)], ['async', await listBlockDevicesAsync(sys, dev)]]) {
    const m = list as Map<string, { probeError?: string; label?: string }>;
    t.match(m.get('sda'), { probeError: `cannot read ${join(dev, 'sda')}: ELOOP` }, `${how}: a symlink loop`);
    t.match(m.get('sdb'), { probeError: `cannot read ${join(dev, 'sdb')}: EISDIR` }, `${how}: a directory`);
    t.match(m.get('sdc'), { probeError: /^cannot describe sdc from .*: EISDIR/ }, `${how}: an unreadable attribute`);
    t.match(m.get('vda'), { label: 'GOOD' }, `${how}: the good disk beside them`);
  }
});
