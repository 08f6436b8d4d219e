// nice on real processes of this host: a child born at a value (every thread of it), the caller's own value back,
// a running child reniced thread by thread, a gone one said.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { reniceProcess, spawnAtNice } from './nice.ts';

/** Each thread's nice value (/proc/PID/task/TID/stat, field 19). */
const niceOf = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
});

/** A Node child once it has its threads (its platform and libuv workers). */
async function child(t: Test, at?: number) {
  const start = () => spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  const c = at === undefined ? start() : spawnAtNice(at, start);
  t.teardown(() => c.kill());
  const pid = c.pid!;
  for (let i = 0; i < 100 && readdirSync(`/proc/${pid}/task`).length < 3; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return { c, pid };
}

const ROOT = process.getuid?.() === 0;

const SKIP_BORN = !ROOT && 'coming back from a nice value needs root (CAP_SYS_NICE)';
t.test('born at a value: every thread of the child, the caller back at its own', { skip: SKIP_BORN }, async (t) => {
  const own = getPriority(0);
  const { pid } = await child(t, 7);
  const threads = niceOf(pid);
  t.ok(threads.length >= 3, `${threads.length} threads`);
  t.same([...new Set(threads)], [7]);
  t.equal(getPriority(0), own, 'the calling thread is back at its value');
  t.same([...new Set(niceOf(process.pid))], [own], 'and no other thread of this process was touched');
});

t.test('reniced thread by thread', { skip: !ROOT && 'lowering a nice value needs root' }, async (t) => {
  const { pid } = await child(t, 9);
  t.equal(reniceProcess(pid, 2), true);
  t.same([...new Set(niceOf(pid))], [2], 'every thread, not only the first');
});

t.test('a process that is gone', async (t) => {
  const { c, pid } = await child(t);
  c.kill('SIGKILL');
  await new Promise((r) => c.once('exit', r));
  t.equal(reniceProcess(pid, 0), false);
});
