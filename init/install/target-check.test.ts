// Whether an install may write the disk it chose: a blank disk yes; mounted, too small or
// read-only never; data or another machine's STATE only when the request says wipe.
import t from 'tap';
import type { BlockDeviceSpec } from '../../proto/gen/spec-types.ts';
import { targetProblems, type TargetFacts } from './target-check.ts';

const disk: BlockDeviceSpec = {
  devPath: '/dev/vdb', major: 252, minor: 16, sizeBytes: 2 ** 30, readOnly: false, removable: false,
  partition: false, partitions: [],
};
const part = (n: number, more: Partial<BlockDeviceSpec> = {}): BlockDeviceSpec =>
  ({ ...disk, devPath: `/dev/vdb${n}`, partition: true, parent: 'vdb', ...more });
const blank: TargetFacts = { disk, partitions: [], mounted: [], imageBytes: 134e6, machineId: 'me' };
const record = (machineId: string) => ({
  machineId, version: '1.0', commit: 'c', installedAt: '2026-11-01T00:00:00Z', disk: '/dev/vda',
});

t.test('a blank disk large enough may be written', async (t) => {
  t.same(targetProblems(blank, false), []);
});

t.test('never: too small, read-only, mounted (wipe or not)', async (t) => {
  const bad: TargetFacts = {
    ...blank, disk: { ...disk, sizeBytes: 1e6, readOnly: true },
    mounted: [{ device: '/dev/vdb4', target: '/mnt/data' }],
  };
  const p = targetProblems(bad, true);
  t.equal(p.length, 3);
  t.match(p.join('\n'), /read-only/);
  t.match(p.join('\n'), /holds 1000000 bytes; the image needs 134000000/);
  t.match(p.join('\n'), /mounted filesystems \(\/dev\/vdb4 on \/mnt\/data\).*wipe does not override this/);
});

t.test('data or another machine\'s STATE: only with wipe', async (t) => {
  const data = { ...blank, partitions: [part(1, { fstype: 'ext4', label: 'DATA' }), part(2)] };
  t.match(targetProblems(data, false), [/holds partitions \/dev\/vdb1 \(ext4 "DATA"\), \/dev\/vdb2; set wipe: true/]);
  t.same(targetProblems(data, true), []);
  t.match(targetProblems({ ...blank, disk: { ...disk, fstype: 'xfs' } }, false), [/holds a xfs filesystem/]);
  const other = { ...data, state: { device: '/dev/vdb3', record: record('someone-else') } };
  t.match(targetProblems(other, false),
    [/STATE of another machine on \/dev\/vdb3 \(machine someone-else, installed 2026-11-01T00:00:00Z with 1\.0\)/]);
  t.same(targetProblems(other, true), []);
  const image = { ...data, state: { device: '/dev/vdb3' } };
  t.match(targetProblems(image, false), [/no install record: made by a disk image/]);
});

t.test('this machine\'s own install may be written again without wipe; no SMBIOS UUID claims nothing', async (t) => {
  const mine = { ...blank, partitions: [part(3)], state: { device: '/dev/vdb3', record: record('me') } };
  t.same(targetProblems(mine, false), []);
  const { machineId: _, ...anonymous } = mine;
  t.match(targetProblems({ ...anonymous, state: { device: '/dev/vdb3', record: record('') } }, false),
    [/another machine/]);
});
