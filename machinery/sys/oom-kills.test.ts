import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killReason, oomKills, parseOomKills } from './oom-kills.ts';

t.test('the counter is read from vmstat text', async (t) => {
  t.equal(parseOomKills('pgfault 12\noom_kill 3\nthp_fault_alloc 0\n'), 3);
  t.equal(parseOomKills('pgfault 12\n'), undefined, 'a kernel without the counter');
  const f = join(mkdtempSync(join(tmpdir(), 'vmstat-')), 'vmstat');
  writeFileSync(f, 'oom_kill 7\n');
  t.equal(oomKills(f), 7);
  t.equal(oomKills(join(f, 'missing')), undefined);
  t.type(oomKills(), 'number', 'this host\'s /proc/vmstat has it');
});

t.test('only a SIGKILL while the counter moved is named an OOM kill', async (t) => {
  t.match(killReason('SIGKILL', 1, 2), /OOM killer/);
  t.equal(killReason('SIGKILL', 2, 2), '', 'someone else sent it');
  t.equal(killReason('SIGTERM', 1, 2), '');
  t.equal(killReason('SIGKILL', undefined, 2), '', 'no counter at start: no guess');
});
