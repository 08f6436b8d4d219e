// Host test of the orphan reaper against the real kernel: this process becomes a
// child subreaper, so orphans of its children are re-parented to it as to PID 1.
import t from 'tap';
import { native } from '../../native/index.ts';
import { zombieChildrenOf } from '../../machinery/sys/proc-table.ts';
import { createReaper } from './reaper.ts';

const n = native();
n.setChildSubreaper();
const lines: string[] = [];
const log = {
  info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m),
  child: () => log,
};
const reaper = createReaper(n, log);
t.teardown(() => reaper.stop());

const ORPHAN_MAKER = `
const { spawn } = require('node:child_process');
const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300)'], { detached: true, stdio: 'ignore' });
c.unref();
console.log('orphan=' + c.pid);
`;

function runOrphanMaker(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = reaper.spawn(process.execPath, ['-e', ORPHAN_MAKER], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
    });
    child.on('exit', () => {
      const pid = Number(/orphan=(\d+)/.exec(out)?.[1]);
      pid ? resolve(pid) : reject(new Error(`no orphan pid in ${out}`));
    });
  });
}

t.test('an orphaned grandchild is reaped and no zombie remains', async (t) => {
  const reaped: number[] = [];
  reaper.onReap((e) => reaped.push(e.pid));
  const orphans = await Promise.all([runOrphanMaker(), runOrphanMaker(), runOrphanMaker()]);
  const deadline = Date.now() + 10_000;
  while (!orphans.every((p) => reaped.includes(p)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(orphans.filter((p) => !reaped.includes(p)), [], 'every orphan reaped');
  t.same(zombieChildrenOf(process.pid), [], 'no zombie children');
  t.ok(lines.some((l) => l.includes(`[${orphans[0]}] exit 0`)), 'the reap is logged with the exit status');
});

t.test("children Node spawned keep their exit status (the reaper never steals it)", async (t) => {
  const codes = await Promise.all([3, 7, 11].map((code) => new Promise<number | null>((resolve) => {
    reaper.spawn(process.execPath, ['-e', `setTimeout(() => process.exit(${code}), 100)`])
      .on('exit', (c) => resolve(c));
  })));
  // an orphan exiting in the same window drives the reaper's SIGCHLD path concurrently
  await runOrphanMaker();
  t.same(codes, [3, 7, 11]);
  t.equal(reaper.managed.size, 0, 'managed set empties as children exit');
});

t.test('waitpid refuses -1', async (t) => {
  t.throws(() => n.waitpid(-1), /pid must be > 0/);
});
