// supervisor: a plugin process is starting until it writes the ready line to its standard output, then
// running; one that dies before it says so goes to backoff without ever having been running. Real child
// processes (node -e), real pipes.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnAtNice } from '../../machinery/sys/nice.ts';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import type { Logger } from '../../machinery/log.ts';
import { PLUGIN_READY_LINE } from '../../machinery/model/plugin.ts';
import { type PluginStatusSpec } from '../../machinery/model/runtime-types.ts';
import { PluginSupervisor, type SupervisedPlugin } from './supervisor.ts';
import { PLUGIN_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

const plugin = (name: string): SupervisedPlugin => ({ name, outputs: [], args: ['plugin', name], ownMounts: false });
/** A "plugin" whose process runs `script`. */
const SCRIPTS: Record<string, string> = {
  ready: `setTimeout(() => console.log(${JSON.stringify(PLUGIN_READY_LINE)}), 300); setInterval(() => {}, 1000);`,
  silent: 'console.log("just a log line"); setTimeout(() => process.exit(3), 600);',
  traceback: 'console.error("Traceback (most recent call last):"); console.error("ValueError: boom"); process.exit(1);',
};

t.test('starting until the ready line, then running; dying before it: backoff, never running', async (t) => {
  const state = new MemoryState();
  const lines: string[] = [];
  const log: Logger = { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m),
    child: () => log };
  const seen = new Map<string, string[]>();
  const w = await state.watch({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE }, {}, (events) => {
    for (const e of events) {
      if (e.type !== 'created' && e.type !== 'updated') continue;
      const states = seen.get(e.resource.metadata.id) ?? [];
      const s = (e.resource.spec as PluginStatusSpec).state!;
      if (states.at(-1) !== s) states.push(s);
      seen.set(e.resource.metadata.id, states);
    }
  });
  t.teardown(() => w.close());
  const ended: string[] = [];
  const sup = new PluginSupervisor({
    state, log, socketPath: '/nonexistent', backoff: { initialMs: 60_000, factor: 1, maxMs: 60_000 },
    spawn: (args: string[]) => {
      if (args[1] === 'unforkable') throw new Error('spawn ENOMEM');
      if (args[1] === 'missing') return spawn('/nonexistent/plugin', [], { stdio: ['ignore', 'pipe', 'pipe'] });
      return spawn(process.execPath, ['-e', SCRIPTS[args[1]!]!], { stdio: ['ignore', 'pipe', 'pipe'] });
    },
    onStartEnded: (name, ok) => ended.push(`${name} ${ok ? 'runs' : 'failed'}`),
  });
  t.teardown(() => sup.stop(1000));
  sup.start([plugin('ready'), plugin('silent'), plugin('unforkable'), plugin('missing')]);
  const deadline = Date.now() + 15_000;
  const settled = () => seen.get('ready')?.at(-1) === 'running' && seen.get('silent')?.at(-1) === 'backoff'
    && seen.get('missing')?.at(-1) === 'stopped';
  while (Date.now() < deadline && !settled()) {
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(seen.get('ready')?.slice(-2), ['starting', 'running'], 'running once it said so');
  t.same(seen.get('silent')?.filter((s) => s !== 'starting'), ['backoff'], 'never running before it died');
  t.equal(seen.get('missing')?.at(-1), 'stopped', 'an executable not found: stopped, not starting for ever');
  t.same(ended.sort(), ['missing failed', 'ready runs', 'silent failed', 'unforkable failed'],
    'each start\'s end is told (the plugin waves wait for them)');
  t.ok(lines.some((l) => l === 'just a log line'), 'other output is logged');
  t.notOk(lines.includes(PLUGIN_READY_LINE), 'the ready line is not');
});

t.test('dying as it starts: its last words on stderr are its lastError; remove stops one for good', async (t) => {
  const state = new MemoryState();
  const log: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => log };
  const sup = new PluginSupervisor({
    state, log, socketPath: '/nonexistent', backoff: { initialMs: 60_000, factor: 1, maxMs: 60_000 },
    spawn: (args: string[]) => spawn(process.execPath, ['-e', SCRIPTS[args[1]!]!], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  });
  t.teardown(() => sup.stop(1000));
  sup.add(plugin('traceback'));
  sup.add(plugin('ready'));
  t.throws(() => sup.add(plugin('ready')), /a plugin named ready runs already/);
  const status = (id: string) => state.findSync({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id })
    ?.spec as PluginStatusSpec | undefined;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !(status('traceback')?.state === 'backoff' && status('ready')?.state === 'running')) {
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(status('traceback')?.lastError, 'ValueError: boom');
  const pid = status('ready')?.pid ?? 0;
  t.ok(pid > 0 && sup.byPid(pid)?.name === 'ready');
  await sup.remove('ready');
  t.equal(status('ready'), undefined, 'its PluginStatus is gone');
  t.equal(sup.byPid(pid), undefined, 'its pid is no plugin now');
  t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'its process is gone');
  await sup.remove('traceback');
  t.equal(status('traceback'), undefined, 'one waiting to restart is removed as well');
});

t.test('waiting (the second wave): a status that says so, no process, no restart; then started as any', async (t) => {
  const state = new MemoryState();
  const log: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => log };
  const spawned: string[] = [];
  const sup = new PluginSupervisor({
    state, log, socketPath: '/nonexistent', backoff: { initialMs: 60_000, factor: 1, maxMs: 60_000 },
    spawn: (args: string[]) => {
      spawned.push(args[1]!);
      return spawn(process.execPath, ['-e', SCRIPTS[args[1]!]!], { stdio: ['ignore', 'pipe', 'pipe'] });
    },
  });
  t.teardown(() => sup.stop(1000));
  const status = (id: string) => state.findSync({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id })
    ?.spec as PluginStatusSpec | undefined;
  sup.wait([plugin('ready')]);
  await new Promise((r) => setTimeout(r, 50));
  t.same(status('ready'), { state: 'waiting', pid: 0, restarts: 0, outputs: [] });
  t.same(spawned, [], 'no process while it waits');
  await t.rejects(sup.restart('ready'), { code: 'failed-precondition',
    message: 'ready has not started yet: it starts with the second wave (once the plugins started before it run and a '
      + 'config that may come is settled, or when the machine config needs it)' });
  t.equal(await sup.restart('nothing'), undefined, 'a name nobody knows is still unknown');
  sup.start([plugin('ready')]);
  t.same(spawned, ['ready']);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && status('ready')?.state !== 'running') await new Promise((r) => setTimeout(r, 50));
  t.equal(status('ready')?.state, 'running');
  t.equal(status('ready')?.restarts, 0, 'waiting was not a restart');
});

t.test('a plugin that cannot be forked is stopped, saying why; one still waiting at stop is stopped', async (t) => {
  const state = new MemoryState();
  const errors: string[] = [];
  const log: Logger = { info: () => {}, warn: () => {}, error: (m) => errors.push(m), child: () => log };
  const sup = new PluginSupervisor({
    state, log, socketPath: '/nonexistent', backoff: { initialMs: 60_000, factor: 1, maxMs: 60_000 },
    spawn: () => { throw Object.assign(new Error('spawn ENOMEM'), { code: 'ENOMEM' }); },
  });
  const status = (id: string) => state.findSync({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id })
    ?.spec as PluginStatusSpec | undefined;
  sup.wait([plugin('late'), plugin('never')]);
  sup.start([plugin('late')]);
  await new Promise((r) => setTimeout(r, 50));
  t.match(status('late'), { state: 'stopped', pid: 0, lastError: 'cannot start: spawn ENOMEM' },
    'not left saying it waits');
  t.same(errors, ['cannot start: spawn ENOMEM'], 'and logged under its name');
  t.equal(status('never')?.state, 'waiting');
  await sup.stop(1000);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(status('never')?.state, 'stopped', 'the machine stopped before its turn');
  await t.rejects(sup.restart('late'),
    { code: 'failed-precondition', message: 'the machine is stopping: late is not restarted' });
});

t.test('a program that is not a plugin: running once started, or once its TCP or HTTP probe passes', async (t) => {
  const state = new MemoryState();
  const lines: string[] = [];
  const log: Logger = { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m),
    child: () => log };
  // Free ports, each a real listener the programs open after a while (a web server that takes its time).
  const free = async () => {
    const { createServer } = await import('node:net');
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise((r) => s.close(r));
    return port;
  };
  const [tcpPort, httpPort, badPort] = [await free(), await free(), await free()];
  const listen = (port: number, status: number) => `setTimeout(() => require('node:http').createServer((q, s) => `
    + `{ s.writeHead(q.url === '/health' ? ${status} : 404); s.end(); }).listen(${port}, '127.0.0.1'), 700);`;
  const programs: Record<string, string> = {
    quiet: 'setInterval(() => {}, 1000);',
    tcp: listen(tcpPort, 200),
    http: listen(httpPort, 204),
    // Listens, but its health path answers 503: never ready.
    sick: listen(badPort, 503),
  };
  const sup = new PluginSupervisor({
    state, log, socketPath: '/nonexistent', backoff: { initialMs: 60_000, factor: 1, maxMs: 60_000 },
    probeIntervalMs: 100,
    spawn: (args: string[]) =>
      spawn(process.execPath, ['-e', programs[args[1]!]!], { stdio: ['ignore', 'pipe', 'pipe'] }),
  });
  t.teardown(() => sup.stop(1000));
  const status = (id: string) => state.findSync({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id })
    ?.spec as PluginStatusSpec | undefined;
  const t0 = Date.now();
  sup.start([
    { ...plugin('quiet'), ready: { kind: 'started' } },
    { ...plugin('tcp'), ready: { kind: 'tcp', port: tcpPort } },
    { ...plugin('http'), ready: { kind: 'http', port: httpPort, path: '/health' } },
    { ...plugin('sick'), ready: { kind: 'http', port: badPort, path: '/health' } },
  ]);
  const when: Record<string, number> = {};
  const sickAnswered = new RegExp(`^not ready yet \\(http:${badPort}/health: answered 503\\)`);
  // Each program starts on its own clock (a loaded host starts them apart): waited for until each has shown
  // what is checked, the sick one's 503 included.
  while (Date.now() - t0 < 20_000 && (Object.keys(when).length < 3 || !lines.some((l) => sickAnswered.test(l)))) {
    for (const n of ['quiet', 'tcp', 'http']) {
      if (status(n)?.state === 'running') when[n] ??= Date.now() - t0;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  // Nothing in `quiet` ever listens: running at all, and before the tcp program's port accepts, is the point.
  t.ok(when.quiet! < when.tcp!, `started: running before anything listens (${when.quiet} ms, tcp ${when.tcp} ms)`);
  t.ok(when.tcp! >= 700, `tcp: running once the port accepts (${when.tcp} ms)`);
  t.ok(when.http! >= 700, `http: running once GET /health answers 2xx (${when.http} ms)`);
  t.equal(status('sick')?.state, 'starting', 'an answer of 503 is not ready');
  t.ok(lines.some((l) => sickAnswered.test(l)), 'the reason it is not ready is logged');
  t.ok(lines.some((l) => l === `not ready yet (tcp:${tcpPort}: ECONNREFUSED); trying every 100ms`),
    'a refused connection names the errno');
});

t.test('started in the background: born at the nice value given, all threads; foreground: every thread back, and '
  + 'what starts after it starts in the foreground', { skip: process.getuid?.() !== 0 && 'renicing back needs root' },
async (t) => {
  const state = new MemoryState();
  const log: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => log };
  const asked: (number | undefined)[] = [];
  const sup = new PluginSupervisor({
    state, log, socketPath: '/nonexistent', backoff: { initialMs: 60_000, factor: 1, maxMs: 60_000 },
    spawn: (args, _env, o) => {
      asked.push(o.nice);
      const start = () => spawn(process.execPath, ['-e', SCRIPTS.ready!], { stdio: ['ignore', 'pipe', 'pipe'] });
      return o.nice === undefined ? start() : spawnAtNice(o.nice, start);
    },
  });
  t.teardown(() => sup.stop(1000));
  sup.start([plugin('front')]);
  sup.start([plugin('back')], { nice: 6 });
  const pid = (id: string) => (state.findSync({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id })
    ?.spec as PluginStatusSpec | undefined)?.pid ?? 0;
  const niceOf = (p: number) => new Set(readdirSync(`/proc/${p}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${p}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  }));
  for (let i = 0; i < 100 && !(pid('back') && pid('front')); i++) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 100 && readdirSync(`/proc/${pid('back')}/task`).length < 3; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  t.same([...niceOf(pid('back'))], [6], 'back: every thread at 6');
  t.same([...niceOf(pid('front'))], [0], 'front: as normal');
  sup.foreground();
  t.same([...niceOf(pid('back'))], [0], 'back: every thread back at 0');
  sup.start([plugin('late')], { nice: 6 });
  t.same(asked, [undefined, 6, undefined], 'late: started in the foreground');
});
