import t from 'tap';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { Logger } from '../../../machinery/log.ts';
import { ENGINE_SOURCE, KERNEL_SOURCE, LogBook, LogRing } from './book.ts';
import { pluginOfLogPrefix } from '../supervisor.ts';

t.test('a ring keeps its newest lines within its size, numbers every line and counts what went', async (t) => {
  const ring = new LogRing(1000);
  // 8 bytes of text each, and 80 of bookkeeping: 11 fit in 1000.
  for (let i = 1; i <= 30; i++) ring.append('info', `line ${String(i).padStart(3, '0')}`);
  t.equal(ring.seq, 30);
  t.equal(ring.bytes, 11 * 88, 'what the held lines cost');
  t.equal(ring.size, 11);
  t.equal(ring.dropped, 19);
  t.same(ring.held().map((e) => e.seq), Array.from({ length: 11 }, (_, i) => 20 + i), 'the newest, in order');
  ring.append('error', 'x'.repeat(5000));
  t.equal(ring.size, 1, 'a line bigger than the ring stays alone, the newest line is never lost');
  const long = new LogRing(1 << 20).append('info', 'y'.repeat(10_000));
  t.match(long.message, /^y{4096}… \(5904 characters cut\)$/, 'a very long line is cut and says so');
});

t.test('many lines: the slots of the gone ones are let go as well', async (t) => {
  const ring = new LogRing(9000);
  for (let i = 0; i < 100_000; i++) ring.append('info', `${i}`.padStart(10));
  t.equal(ring.size, 100);
  t.ok((ring as unknown as { lines: unknown[] }).lines.length < 2200, 'the array does not grow with every line');
});

t.test('a follower gets the lines after it starts; stopping ends that', async (t) => {
  const ring = new LogRing(1000);
  ring.append('info', 'before');
  const got: string[] = [];
  const stop = ring.follow((e) => got.push(e.message));
  ring.append('warning', 'during');
  stop();
  ring.append('info', 'after');
  t.same(got, ['during']);
});

t.test('the engine logger is kept by source: a plugin\'s prefix names its ring, the rest is the engine\'s',
  async (t) => {
  const printed: string[] = [];
  const base = (prefix: string): Logger => ({
    info: (m) => printed.push(`${prefix}${m}`), warn: (m) => printed.push(`${prefix}WARN ${m}`),
    error: (m) => printed.push(`${prefix}ERROR ${m}`), child: (p) => base(`${prefix}${p}: `),
  });
  const book = new LogBook({ ringBytes: 4096 });
  const log = book.capture(base(''), pluginOfLogPrefix);
  log.info('starting');
  log.child('config').warn('a document was refused');
  log.child('plugin/network').error('dhcp/eth0: no offer');
  t.same(printed, ['starting', 'config: WARN a document was refused', 'plugin/network: ERROR dhcp/eth0: no offer'],
    'the console still gets every line as before');
  t.same(book.open(ENGINE_SOURCE)!.held.map((e) => [e.level, e.message]),
    [['info', 'starting'], ['warning', 'config: a document was refused']]);
  t.same(book.open('network')!.held.map((e) => [e.level, e.message]), [['error', 'dhcp/eth0: no offer']]);
  t.equal(book.open('nosuch'), undefined);
  t.same(book.sources().map((s) => s.name), ['engine', 'network'], 'no kernel source without a kmsg path');
});

t.test('the kernel source reads the real /dev/kmsg: levels, wall time, follow', async (t) => {
  const book = new LogBook({ kmsgPath: '/dev/kmsg' });
  const mark = `log-book-test ${randomUUID()}`;
  writeFileSync('/dev/kmsg', `<3>${mark} held\n`);
  const c = book.open(KERNEL_SOURCE)!;
  t.teardown(() => c.close());
  const held = c.held.filter((e) => e.message.includes(mark));
  t.same(held.map((e) => [e.level, e.message]), [['error', `${mark} held`]]);
  t.ok(Math.abs(held[0]!.time - Date.now()) < 5000, `its time is now: ${new Date(held[0]!.time).toISOString()}`);
  const next = new Promise<string>((resolve) => c.follow((e) => {
    if (e.message.includes(mark)) resolve(e.message);
  }));
  writeFileSync('/dev/kmsg', `<7>${mark} followed\n`);
  t.equal(await next, `${mark} followed`);
  const k = book.sources().find((s) => s.name === KERNEL_SOURCE)!;
  t.ok(k.lines > 0 && k.capacityBytes === 0, 'listed, its ring the kernel\'s');
});

t.test('runs: a ring knows where each start of its source began; the one before the current is previousRun',
  async (t) => {
    const r = new LogRing(1 << 16);
    t.equal(r.previousRun(), undefined, 'no run yet');
    r.startRun();
    r.append('info', 'first run, line 1');
    r.append('info', 'first run, line 2');
    t.equal(r.previousRun(), undefined, 'one run: no previous one');
    r.startRun();
    r.append('info', 'second run');
    t.same(r.previousRun(), { from: 1, to: 3 });
    t.same(r.held().filter((e) => e.seq >= 1 && e.seq < 3).map((e) => e.message),
      ['first run, line 1', 'first run, line 2']);
    for (let i = 0; i < 5; i++) r.startRun();
    t.same(r.previousRun(), { from: 4, to: 4 }, 'runs without a line are runs too, and only the last few are kept');
  });
