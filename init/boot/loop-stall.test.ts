// The stall watch on a real event loop: a synchronous busy wait is said with its length, a forced major
// garbage collection with its kind (node runs with --expose-gc here through v8.setFlagsFromString).
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { lateBy, stallLevel, watchLoopStalls } from './loop-stall.ts';
import type { Logger } from '../../machinery/log.ts';

function recorder(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log: Logger = {
    info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m),
    child: () => log,
  } as Logger;
  return { log, lines };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('lateBy: only a tick at least stallMs late counts', async (t) => {
  t.equal(lateBy(1000, 1999, 1000), undefined);
  t.equal(lateBy(1000, 2000, 1000), 1000);
  t.equal(lateBy(1000, 900, 1000), undefined, 'early is on time');
});

t.test('a blocked loop is said, with about how long', async (t) => {
  const { log, lines } = recorder();
  const stop = watchLoopStalls(log, { periodMs: 50, stallMs: 300, gcMs: 10_000 });
  t.teardown(stop);
  await pause(120);
  t.same(lines, [], 'nothing said while the loop runs');
  const until = performance.now() + 600;
  while (performance.now() < until) { /* the loop is blocked */ }
  await pause(120);
  t.equal(lines.length, 1, lines.join('\n'));
  const ms = Number(/^event loop: blocked for (\d+) ms \(\d+ major page faults meanwhile\)$/.exec(lines[0] ?? '')?.[1]);
  t.ok(ms >= 500 && ms < 2000, `blocked for ${ms} ms, near the 600 ms spent`);
});

t.test('a garbage collection over the threshold is said with its kind', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const { log, lines } = recorder();
  const stop = watchLoopStalls(log, { periodMs: 10_000, stallMs: 60_000, gcMs: 0 });
  t.teardown(stop);
  gc();
  await pause(50);
  t.ok(lines.some((l) => /^event loop: a major garbage collection took \d+ ms$/.test(l)), lines.join('\n'));
});

t.test('a long stall is a warning only when it came with paging', async (t) => {
  t.equal(stallLevel(6000, 57), 'info', 'a loaded emulator\'s boot: long, a few dozen first reads of code');
  t.equal(stallLevel(6000, 2000), 'warn', 'long, and paging: short of memory');
  t.equal(stallLevel(1500, 2000), 'info', 'paging, but shorter than a client\'s connect');
  t.equal(stallLevel(400, 10, 300, 5), 'warn', 'thresholds as given');
  const levels: string[] = [];
  const log = {
    info: () => levels.push('info'), warn: () => levels.push('warn'), error: () => levels.push('error'),
    child: () => log,
  } as unknown as Logger;
  // With no faults needed, a long stall warns; a short one informs (the watch uses stallLevel).
  const stop = watchLoopStalls(log, { periodMs: 20, stallMs: 100, gcMs: 60_000, warnMs: 400, pagingFaults: 0 });
  t.teardown(stop);
  for (const ms of [200, 600]) {
    const until = performance.now() + ms;
    while (performance.now() < until) { /* the loop is blocked */ }
    await pause(60);
  }
  t.same(levels, ['info', 'warn']);
});
