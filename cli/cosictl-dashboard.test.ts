// cosictl dashboard against the built engine (`appliance serve` with the test plugins) over mutual
// TLS: printed once into a pipe, and live in a real terminal (tmux): a declared address and a
// plugin's line appear as they happen, colors follow NO_COLOR, a resize redraws, q quits, and an
// engine that goes away is said (exit 5).
import t from 'tap';
import { join } from 'node:path';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import { Tmux } from '../scripts/lib/tmux.ts';
import { runProgram, type Ran } from '../scripts/lib/run-program.ts';

const a = artifacts();
const served = await startServe(a.exe, ['--test-plugins']);
t.teardown(() => served.stop());
const cosictl = join(a.dir, 'cosictl');

const run = (args: string[], env: Record<string, string> = {}, input?: string) => runProgram(cosictl,
  ['--config', served.cosictlConfig, ...args], { env, ...(input !== undefined ? { input } : {}) });
const live = (name: string, env: Record<string, string> = {}, context = 'admin') => Tmux.start(name,
  [cosictl, '--config', served.cosictlConfig, '--context', context, 'dashboard'],
  { columns: 120, rows: 40, env: { TERM: 'xterm-256color', ...env } });

// The engine's plugins are up once the dashboard shows them all running.
const ALL_RUNNING = /test-reader running/;

t.test('into a pipe: the screen once, without colors, every section; a reader may', async (t) => {
  let r: Ran;
  // Up to two minutes: on a loaded host the plugins' first starts and the health check that follows them are slow.
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    r = await run(['--context', 'reader', 'dashboard'], { COLUMNS: '100', LINES: '30' });
    // Health follows the plugins' statuses a moment later.
    if (ALL_RUNNING.test(r.out) && /^UNHEALTHY: plugins \(test-crasher /m.test(r.out)) break;
    await new Promise((x) => setTimeout(x, 200));
  }
  t.equal(r!.code, 0, r!.err);
  const lines = r!.out.split('\n').slice(0, -1);
  t.equal(lines.length, 30, '$LINES rows');
  for (const l of lines) t.ok([...l].length <= 100, `at most $COLUMNS: ${l}`);
  t.notMatch(r!.out, /\x1b/, 'no escape sequences');
  t.match(r!.out, new RegExp(`^ 127\\.0\\.0\\.1:${served.port}  \\S+  \\d\\d:\\d\\d:\\d\\d UTC  q quits`));
  t.match(r!.out, /^up .* load [\d.]+ [\d.]+ [\d.]+ .* memory \S+ of \S+/m);
  t.match(r!.out, /^UNHEALTHY: plugins \(test-crasher /m, 'the crash-looping test plugin fails health');
  t.match(r!.out, /^PLUGINS\n.*network running/m);
  t.match(r!.out, /^LINKS\n(.*\n)*? {2}lo /m);
  t.match(r!.out, /^TIME {2}/m);
  t.match(r!.out, /^MOUNTS\n/m);
  t.match(r!.out, /^LOGS\n\d\d:\d\d:\d\d \S+ +(INFO|WARN|ERROR)/m);
  const bad = await run(['dashboard', 'extra']);
  t.equal(bad.code, 2);
  t.match(bad.err, /dashboard: unexpected argument "extra"/);
});

t.test('live: an address declared and a plugin\'s line show as they happen; colors; resize; q', async (t) => {
  const term = await live('dashboard');
  t.teardown(() => term.kill());
  t.match(await term.waitFor(ALL_RUNNING, 20_000), ALL_RUNNING);
  const applied = await run(['apply', '-f', '-'], {}, [
    'metadata: {type: addressspec, id: dashboard}', 'spec: {address: 192.0.2.77/24, link: eth0}', '---',
    'metadata: {type: testfileread, id: dashboard}', 'spec: {path: /no-such-file-for-the-dashboard}', '',
  ].join('\n'));
  t.equal(applied.code, 0, applied.err);
  // Up to a minute: the screen shows both as soon as they happen, but on a loaded host (a full run here, while the
  // appliance tests' variant builds compressed their images) the network plugin took over 10 s to apply the address.
  const seen = await term.waitFor(
    /(?=[\s\S]*eth0 .*192\.0\.2\.77\/24)(?=[\s\S]*test-reader .*no-such-file-for-the-d)/, 60_000);
  t.match(seen, /^ {2}eth0 +up +\S+ +.*192\.0\.2\.77\/24/m, 'the address on its link');
  t.match(seen, /^\d\d:\d\d:\d\d test-reader WARN {2}test-reader: dashboard: cannot read \/no-such-file-for-the-d/m,
    'the plugin\'s line in the logs pane');
  const colored = await term.screen(true);
  t.match(colored, /\x1b\[7m 127\.0\.0\.1/, 'the title bar in reverse video');
  t.match(colored, /\x1b\[32mrunning/, 'running in green');
  await term.resize(60, 20);
  const small = await term.waitFor(/^ 127\.0\.0\.1:\d+ .*…$/m);
  const rows = small.split('\n').filter((l) => l !== '');
  t.ok(rows.length <= 20 && rows.every((l) => [...l].length <= 60), 'redrawn for 60 by 20');
  await term.keys('q');
  t.equal(await term.waitExit(), 0, 'q quits');
  t.notMatch(await term.screen(), /PLUGINS/, 'the screen as it was before');
});

t.test('NO_COLOR: no colors, the same screen', async (t) => {
  const term = await live('dashboard-plain', { NO_COLOR: '1' });
  t.teardown(() => term.kill());
  t.match(await term.waitFor(ALL_RUNNING, 20_000), ALL_RUNNING);
  t.notMatch(await term.screen(true), /\x1b\[(\d+;)*(7|3\d)m/, 'no SGR color or reverse');
  await term.keys('C-c');
  t.equal(await term.waitExit(), 0, 'Ctrl-C quits too');
});

t.test('the engine goes away: said on the screen; q then exits 5', async (t) => {
  const term = await live('dashboard-gone');
  t.teardown(() => term.kill());
  t.match(await term.waitFor(ALL_RUNNING, 20_000), ALL_RUNNING);
  await served.stop();
  t.match(await term.waitFor(/the machine stopped answering/, 20_000), /^the machine stopped answering: /m);
  await term.keys('q');
  t.equal(await term.waitExit(), 5);
});
