// Both listings of the block devices, read from this host's own /sys/class/block and /dev: the synchronous one
// (boot, plugins) and the one through the thread pool (the installer, while PID 1 serves the API) agree.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
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
