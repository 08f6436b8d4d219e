// Tests of the per-process figures: the smaps_rollup parser on this kernel's own text,
// names, and the walk over a /proc that loses a process while it is read.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineProcesses, parseSmapsRollup, processName } from './process-cost.ts';
import { formatProcess, parseProcesses } from './ready-line.ts';

const ROLLUP = `55f9900cd000-7ffdbe30b000 ---p 00000000 00:00 0                          [rollup]
Rss:                1696 kB
Pss:                 256 kB
Pss_Anon:            112 kB
Shared_Clean:       1540 kB
Shared_Dirty:          0 kB
Private_Clean:        44 kB
Private_Dirty:       112 kB
Anonymous:           112 kB
`;

t.test('smaps_rollup: RSS, PSS and private (clean + dirty); missing fields are no figure', async (t) => {
  t.same(parseSmapsRollup(ROLLUP), { rssKiB: 1696, pssKiB: 256, privateKiB: 156 });
  t.equal(parseSmapsRollup(ROLLUP.replace(/^Pss:.*\n/m, '')), undefined, 'Pss_Anon is not Pss');
  const own = parseSmapsRollup(readFileSync('/proc/self/smaps_rollup', 'utf8'));
  t.ok(own && own.rssKiB > 1000 && own.pssKiB <= own.rssKiB && own.privateKiB <= own.rssKiB, 'this process, as read');
});

t.test('names: PID 1 is init, a plugin by its name, anything else by its command', async (t) => {
  t.equal(processName(1, ['/system/image/init']), 'init');
  t.equal(processName(310, ['/system/image/init', 'plugin', 'network']), 'plugin/network');
  t.equal(processName(42, ['/usr/bin/node', '/x/y.js']), 'node y.js');
});

t.test('walks /proc: kernel threads and processes gone while read are left out', async (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'proc-'));
  const add = (pid: string, cmdline: string | undefined, rollup: string | undefined) => {
    mkdirSync(join(proc, pid));
    if (cmdline !== undefined) writeFileSync(join(proc, pid, 'cmdline'), cmdline);
    if (rollup !== undefined) writeFileSync(join(proc, pid, 'smaps_rollup'), rollup);
    // utime 250 and stime 62 ticks: 3.12 s; started 517 ticks after boot
    writeFileSync(join(proc, pid, 'stat'), `${pid} (in it) S 0 1 1 0 -1 4194560 0 0 0 0 250 62 0 0 20 0 1 0 517\n`);
  };
  add('1', '/init\0', ROLLUP);
  add('2', '', ''); // a kernel thread
  add('17', '/init\0plugin\0time\0', ROLLUP);
  add('18', '/init\0plugin\0issue\0', undefined); // exited between the two reads
  mkdirSync(join(proc, 'self'));
  t.same(machineProcesses(proc).map((p) => [p.name, p.pid, p.privateKiB, p.cpuSeconds, p.startedSeconds]),
    [['init', 1, 156, 3.12, 5.17], ['plugin/time', 17, 156, 3.12, 5.17]]);
  const self = machineProcesses().find((p) => p.pid === process.pid);
  t.ok(self && self.rssKiB > 0 && self.cpuSeconds > 0, 'the real /proc has this process, and its CPU time');
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  t.ok(self && self.startedSeconds > 0 && self.startedSeconds <= uptime, 'and when it started, before now');
});

t.test('the console line reads back', async (t) => {
  const f = {
    name: 'plugin/network', pid: 311, rssKiB: 61234, pssKiB: 20111, privateKiB: 15000, cpuSeconds: 4.25,
    startedSeconds: 3.61,
  };
  t.same(parseProcesses(`x\n${formatProcess(f)}\n${formatProcess({ ...f, name: 'init', pid: 1 })}\n`),
    [f, { ...f, name: 'init', pid: 1 }]);
});
