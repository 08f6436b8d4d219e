// cosictl logs and dmesg against the built engine (`appliance serve` with the test plugins) over
// mutual TLS: the sources, a plugin that prints when asked, levels, --tail, --since, -o json,
// following new lines, rings bounded by appliance.log_ring_kib, the kernel log, and a follow
// that ends when the machine goes away.
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe, type Served } from '../init/engine/serve-harness.ts';
import { newResource } from '../cosi/resource/resource.ts';
import { runProgram } from '../scripts/lib/run-program.ts';
import { RUNTIME_NS, TEST_FILE_READ_TYPE } from '../proto/gen/resource-types.ts';

const a = artifacts();
const cosictl = join(a.dir, 'cosictl');
// Small rings (4 KiB), so that a test can fill one.
const served = await startServe(a.exe, ['--test-plugins', '--cmdline', 'appliance.log_ring_kib=4']);
t.teardown(() => served.stop());
const admin = served.client();
t.teardown(() => admin.close());

const run = (args: string[], s: Served = served, context = 'admin') =>
  runProgram(cosictl, ['--config', s.cosictlConfig, '--context', context, ...args]);

/** Asks test-reader to read `path`; it logs a line saying what it read (or a warning). */
const askRead = (id: string, path: string) =>
  admin.create(newResource({ namespace: RUNTIME_NS, type: TEST_FILE_READ_TYPE, id }, { path }));

async function until(what: string, f: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await f()) return;
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}

t.test('logs without a source lists them: the engine, the kernel and every plugin', async (t) => {
  await until('the plugins run', async () => /^test-reader +[1-9]/m.test((await run(['logs'])).out));
  const r = await run(['logs']);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /^SOURCE +LINES +KEPT +RING +NO LONGER KEPT\n/);
  for (const s of ['engine', 'kernel', 'network', 'storage', 'test-reader', 'test-crasher']) {
    t.match(r.out, new RegExp(`^${s} +\\d+ `, 'm'), s);
  }
  t.match(r.out, /^engine +\d+ +\d+(\.\d)? (B|KiB) +4\.0 KiB /m, 'the ring is the size the kernel parameter says');
});

t.test('a plugin that prints: its lines, levels and order, a reader may read them', async (t) => {
  const id = `r${randomUUID().slice(0, 8)}`;
  await askRead(`${id}-ok`, '/proc/self/status');
  await askRead(`${id}-missing`, '/nonexistent/file');
  await until('both lines', async () => (await run(['logs', 'test-reader'])).out.includes(`${id}-missing`));
  const r = await run(['logs', 'test-reader'], served, 'reader');
  t.equal(r.code, 0, r.err);
  t.match(r.out, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z INFO  test-reader: ${id}-ok: read /proc/self/status `
    + '\\(\\d+ characters\\)$', 'm'));
  t.match(r.out, new RegExp(`^\\S+ WARN  test-reader: ${id}-missing: cannot read /nonexistent/file: ENOENT`, 'm'));
  const lines = r.out.trim().split('\n');
  const times = lines.map((l) => l.split(' ')[0]!);
  t.same(times, [...times].sort(), 'oldest first');
  t.notMatch(r.out, /^\[/m, 'no process tag in the text');
});

t.test('--tail, --since, -o json', async (t) => {
  const tail = await run(['logs', 'test-reader', '--tail', '1']);
  t.equal(tail.out.trim().split('\n').length, 1, tail.out);
  const json = (await run(['logs', 'test-reader', '-o', 'json'])).out.trim().split('\n').map((l) => JSON.parse(l));
  t.ok(json.length >= 2);
  t.match(json.at(-1), { source: 'test-reader', level: String, message: String, seq: Number, time: String });
  t.ok(json.every((l, i) => i === 0 || l.seq > json[i - 1].seq), 'numbered in order');
  await new Promise((r) => setTimeout(r, 1500));
  const id = `s${randomUUID().slice(0, 8)}`;
  await askRead(id, '/proc/self/status');
  await until('the new line', async () => (await run(['logs', 'test-reader'])).out.includes(id));
  const since = await run(['logs', 'test-reader', '--since', '1s']);
  t.equal(since.out.trim().split('\n').length, 1, `only the line of the last second: ${since.out}`);
  t.match(since.out, id);
  t.equal((await run(['logs', 'test-reader', '--since', '2026-01-01T00:00:00Z'])).out.trim().split('\n').length,
    json.length + 1, 'since a time long ago: all');
  for (const [args, re] of [
    [['logs', 'test-reader', '--tail', 'x'], /--tail: "x" is not a number of lines/],
    [['logs', 'test-reader', '--since', 'yesterday'], /--since: "yesterday" is neither a duration/],
    [['logs', 'test-reader', '-o', 'yaml'], /-o yaml: logs print lines or json/],
    [['logs', '-f'], /logs: --follow needs a SOURCE/],
    [['logs', 'a', 'b'], /one source at a time/],
    [['dmesg', 'x'], /dmesg: unexpected argument "x"/],
  ] as const) {
    const r = await run([...args]);
    t.same([r.code, re.test(r.err)], [2, true], `${args.join(' ')}: ${r.err}`);
  }
});

t.test('an unknown source: exit 4, naming the ones there are', async (t) => {
  const r = await run(['logs', 'nosuch']);
  t.equal(r.code, 4);
  t.match(r.err, /no log source "nosuch"; there are: audit, engine, [^\n]*test-reader/);
});

t.test('-f prints the kept lines, then new ones as they come; Ctrl-C ends it with 0', async (t) => {
  const child = spawn(cosictl, ['--config', served.cosictlConfig, 'logs', 'test-reader', '-f', '--tail', '1']);
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  await until('the kept line', async () => out.split('\n').length > 1);
  const id = `f${randomUUID().slice(0, 8)}`;
  await askRead(id, '/nonexistent/follow');
  await until('the new line while following', async () => out.includes(`${id}: cannot read /nonexistent/follow`));
  child.kill('SIGINT');
  const [code] = await once(child, 'exit') as [number];
  t.equal(code, 0);
  t.equal(out.trim().split('\n').length, 2, out);
});

t.test('a ring holds at most its size: the oldest lines go, the listing counts them, a reader sees the gap',
  async (t) => {
    const id = `n${randomUUID().slice(0, 8)}`;
    // Each line is about 70 bytes: 100 of them are more than the 4 KiB ring.
    await Promise.all(Array.from({ length: 100 }, (_, i) => askRead(`${id}-${i}`, '/proc/self/status')));
    await until('the last line', async () => (await run(['logs', 'test-reader'])).out.includes(`${id}-99:`));
    const list = await run(['logs']);
    const [, lines, kept, dropped] = /^test-reader +(\d+) +([\d.]+) (B|KiB) +4\.0 KiB +(\d+)$/m
      .exec(list.out)!.filter((_, i) => i !== 3);
    t.ok(Number(kept) <= 4.0, `kept ${kept} KiB`);
    t.ok(Number(dropped) > 0 && Number(lines) < 100, `${lines} kept, ${dropped} no longer`);
    const r = await run(['logs', 'test-reader']);
    t.notMatch(r.out, `${id}-0:`, 'the oldest went');
    t.match(r.out, `${id}-99:`);
  });

t.test('--previous: the lines of a plugin\'s run before a restart; none before one', async (t) => {
  // This file's 4 KiB rings hold a run or two of lines: the run before would soon be gone.
  const roomy = await startServe(a.exe, ['--test-plugins']);
  t.teardown(() => roomy.stop());
  const on = (args: string[]) => runProgram(cosictl, ['--config', roomy.cosictlConfig, ...args]);
  const client = roomy.client();
  t.teardown(() => client.close());
  const read = (id: string, path: string) =>
    client.create(newResource({ namespace: RUNTIME_NS, type: TEST_FILE_READ_TYPE, id }, { path }));
  await until('the plugins run', async () => /test-reader +\d+ +running/.test((await on(['get', 'plugins'])).out));
  const once = await on(['logs', 'network', '--previous']);
  t.same([once.code, once.err], [1, 'cosictl: network has run once since boot: no previous run\n']);
  const before = `p${randomUUID().slice(0, 6)}`;
  await read(before, '/nonexistent/before');
  await until('the line', async () => (await on(['logs', 'test-reader'])).out.includes(before));
  const restarted = await on(['restart', 'test-reader']);
  t.equal(restarted.code, 0, restarted.err);
  await until('running again', async () => /test-reader +\d+ +running/.test((await on(['get', 'plugins'])).out));
  const after = `q${randomUUID().slice(0, 6)}`;
  await read(after, '/nonexistent/after');
  await until('the new run\'s line', async () => (await on(['logs', 'test-reader'])).out.includes(after));
  const prev = await on(['logs', 'test-reader', '-p']);
  t.equal(prev.code, 0, prev.err);
  t.match(prev.out, new RegExp(`${before}: cannot read /nonexistent/before`), 'the run before');
  t.notMatch(prev.out, new RegExp(after), 'not this run\'s');
  const follow = await on(['logs', 'test-reader', '--previous', '-f']);
  t.same([follow.code, follow.err], [2, 'cosictl: --previous and -f: a run that ended cannot be followed\n']);
});

t.test('dmesg: the kernel log, with what was written there just now', async (t) => {
  const mark = `cosictl-logs-test ${randomUUID()}`;
  writeFileSync('/dev/kmsg', `<4>${mark}\n`);
  const r = await run(['dmesg', '--tail', '50']);
  t.equal(r.code, 0, r.err);
  t.match(r.out, new RegExp(`^\\S+Z WARN  ${mark}$`, 'm'));
  t.same((await run(['logs', 'kernel', '--tail', '50'])).out.split('\n').filter((l) => l.includes(mark)).length, 1,
    'logs kernel is the same');
});

t.test('a follow ends, exit 5, saying so, when the machine goes away', async (t) => {
  const other = await startServe(a.exe);
  const child = spawn(cosictl, ['--config', other.cosictlConfig, 'logs', 'engine', '-f']);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d;
  });
  await until('the kept lines', async () => out.length > 0);
  const exited = once(child, 'exit');
  await other.stop();
  const [code] = await exited as [number];
  t.equal(code, 5, err);
  t.match(err, /the machine stopped sending engine's lines/);
});
