// cgroup: the texts written to a group's files, and the order of a group's making, against a directory
// laid out as the kernel's cgroupfs is (its control files as plain files): the root's controllers
// turned on, extensions/ made and given them, the group's limits written. qemu/extension.test.ts runs
// the same code against the guest's real cgroup2, reads the limits back and removes groups (cgroup.kill).
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMaxText, prepareGroup, removeGroup } from './cgroup.ts';

t.test('cpu.max for a percentage of one CPU', async (t) => {
  t.equal(cpuMaxText(), 'max 100000');
  t.equal(cpuMaxText(50), '50000 100000');
  t.equal(cpuMaxText(250), '250000 100000', 'more than one CPU');
  t.equal(cpuMaxText(0.1), '1000 100000', 'never under the kernel\'s 1 ms');
});

t.test('controllers turned on from the root down, then the limits', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  writeFileSync(join(root, 'cgroup.subtree_control'), '');
  // The kernel makes a new group's control files; here the test lays out extensions/ as it would.
  mkdirSync(join(root, 'extensions'));
  writeFileSync(join(root, 'extensions', 'cgroup.controllers'), 'cpu memory\n');
  writeFileSync(join(root, 'extensions', 'cgroup.subtree_control'), '');
  const dir = prepareGroup('hello', { memoryBytes: 96 << 20, cpuPercent: 50 }, root);
  t.equal(dir, join(root, 'extensions', 'hello'));
  t.equal(readFileSync(join(root, 'cgroup.subtree_control'), 'utf8'), '+memory +cpu');
  t.equal(readFileSync(join(root, 'extensions', 'cgroup.subtree_control'), 'utf8'), '+memory +cpu');
  t.equal(readFileSync(join(dir, 'memory.max'), 'utf8'), String(96 << 20));
  t.equal(readFileSync(join(dir, 'memory.oom.group'), 'utf8'), '1');
  t.equal(readFileSync(join(dir, 'cpu.max'), 'utf8'), '50000 100000');
  const open = prepareGroup('free', {}, root);
  t.equal(readFileSync(join(open, 'memory.max'), 'utf8'), 'max', 'no limit of its own');
  t.equal(readFileSync(join(open, 'cpu.max'), 'utf8'), 'max 100000');
  await removeGroup(join(root, 'extensions', 'never-made'));
  t.pass('a group that is not there: nothing to remove');
});

t.test('a kernel without the memory controller: said, naming the group', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'cgroup.controllers'), 'cpu pids\n');
  writeFileSync(join(root, 'cgroup.subtree_control'), '');
  t.throws(() => prepareGroup('hello', {}, root),
    { message: `cgroup ${join(root, 'extensions', 'hello')}: turning on memory and cpu at the root: ${root}: `
      + 'the kernel offers no memory controller' });
});
