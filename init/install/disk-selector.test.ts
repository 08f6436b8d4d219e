// Which disk an InstallRequest names: sizes as people write them, globs, and the refusals that
// list the candidates.
import t from 'tap';
import type { BlockDeviceSpec } from '../../proto/gen/spec-types.ts';
import { selectDisk } from './disk-selector.ts';
import { parseSizeCondition } from '../../machinery/model/size-condition.ts';

const GiB = 2 ** 30;
const dev = (name: string, sizeBytes: number, more: Partial<BlockDeviceSpec> = {}): BlockDeviceSpec => ({
  devPath: `/dev/${name}`, major: 8, minor: 0, sizeBytes, readOnly: false, removable: false, partition: false,
  partitions: [], ...more,
});
const devices = [
  dev('sr0', 300e6, { fstype: 'iso9660', removable: true }),
  dev('vda', 10 * GiB, { serial: 'disk-a' }),
  dev('vda1', GiB, { partition: true, parent: 'vda' }),
  dev('vdb', 20 * GiB, { serial: 'disk-b' }),
  dev('sda', 8 * GiB, { model: 'QEMU HARDDISK   ', serial: 'usb-1', removable: true, fstype: 'iso9660' }),
  dev('loop0', GiB),
];
const none = { path: '', model: '', serial: '', size: '' };

t.test('sizes: comparisons and units as people write them', async (t) => {
  t.same(parseSizeCondition('>= 10GiB'), { op: '>=', bytes: 10 * GiB, text: '>= 10GiB' });
  t.same(parseSizeCondition('<2TB'), { op: '<', bytes: 2e12, text: '<2TB' });
  t.match(parseSizeCondition('8G'), { op: '==', bytes: 8e9 });
  t.match(parseSizeCondition('1.5 MiB'), { bytes: 1.5 * 2 ** 20 });
  t.match(parseSizeCondition('4KiB'), { bytes: 4096 });
  t.match(parseSizeCondition('ten gigs'), /size "ten gigs": want an optional comparison/);
  t.match(parseSizeCondition('10 XB'), Error);
});

t.test('one disk by serial, path, model glob or size; the medium and partitions are never chosen', async (t) => {
  t.equal(selectDisk({ ...none, serial: 'disk-b' }, devices).disk?.devPath, '/dev/vdb');
  t.equal(selectDisk({ ...none, path: '/dev/vda' }, devices).disk?.devPath, '/dev/vda');
  t.equal(selectDisk({ ...none, model: 'QEMU*' }, devices).disk?.devPath, '/dev/sda', 'sysfs padding trimmed');
  t.equal(selectDisk({ ...none, size: '> 15GiB' }, devices).disk?.devPath, '/dev/vdb');
  t.equal(selectDisk({ ...none, size: '> 15GiB', serial: 'disk-a' }, devices).error?.startsWith('no disk matches'),
    true, 'every field must match');
  t.equal(selectDisk({ ...none, model: 'QEMU*' }, devices, '/dev/sda').error?.startsWith('no disk'), true,
    'the disk the medium is on is no candidate');
  t.match(selectDisk({ ...none, path: '/dev/sda' }, devices, '/dev/sda').error, /holds the install medium/);
});

t.test('refusals say why and list the disks', async (t) => {
  t.match(selectDisk(none, devices).error, /the disk selector is empty/);
  t.match(selectDisk({ ...none, path: '/dev/vda1' }, devices).error, /partition of vda: name the whole disk/);
  const many = selectDisk({ ...none, size: '>= 1GiB' }, devices).error ?? '';
  t.match(many, /^3 disks match size >= 1GiB: \/dev\/vda, \/dev\/vdb, \/dev\/sda; add a field/);
  t.notMatch(many, /loop0|sr0/, 'loop devices and CD-ROMs are not disks to install to');
  t.match(selectDisk({ ...none, serial: 'nope' }, devices).error,
    /^no disk matches serial "nope"; the disks: \/dev\/vda 10\.00 GiB serial "disk-a"; /);
  t.match(selectDisk({ ...none, size: 'huge' }, devices).error, /size "huge"/);
  t.match(selectDisk({ ...none, serial: 'x' }, []).error, /the machine has no disk/);
});
