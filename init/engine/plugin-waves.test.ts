import t from 'tap';
import type { Logger } from '../../machinery/log.ts';
import { startInWaves } from './plugin-waves.ts';
import type { SupervisedPlugin } from './supervisor.ts';

const plugin = (name: string): SupervisedPlugin => ({ name, outputs: [], args: ['plugin', name], ownMounts: true });
const [network, platform, storage, time] = ['network', 'platform', 'storage', 'time'].map(plugin) as
  [SupervisedPlugin, SupervisedPlugin, SupervisedPlugin, SupervisedPlugin];

function recorder() {
  const started: string[][] = [];
  const lines: string[] = [];
  const log: Logger = {
    info: (m) => lines.push(m), warn: (m) => lines.push(`WARN ${m}`), error: (m) => lines.push(`ERROR ${m}`),
    child: () => log,
  };
  const waiting: string[][] = [];
  return {
    started, waiting, lines, log,
    start: (ps: readonly SupervisedPlugin[]) => started.push(ps.map((p) => p.name)),
    wait: (ps: readonly SupervisedPlugin[]) => waiting.push(ps.map((p) => p.name)),
  };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('the first wave at once; the rest when the network is configured, once', async (t) => {
  const r = recorder();
  const w = startInWaves({
    first: [network, platform], rest: [storage, time], start: r.start, wait: r.wait, log: r.log, capMs: 500,
  });
  t.same(r.waiting, [['storage', 'time']], 'the second wave is told it waits, before anything starts');
  t.same(r.started, [['network', 'platform']]);
  w.startEnded('network');
  w.startEnded('platform');
  w.networkConfigured();
  w.networkConfigured();
  await sleep(600); // past the cap: nothing more
  t.same(r.started, [['network', 'platform'], ['storage', 'time']]);
  t.same(r.lines, [
    'plugins: network, platform first; storage, time once the network is configured and those run (0.5 s at most)',
    'plugins: starting storage, time: the network is configured',
  ]);
});

t.test('without the network configured, the rest start at the cap, and say why', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network], rest: [storage], start: r.start, log: r.log, capMs: 100 });
  await sleep(50);
  t.same(r.started, [['network']], 'not before the cap');
  await sleep(150);
  t.same(r.started, [['network'], ['storage']]);
  t.match(r.lines[1], /starting storage: the network is not configured after 0\.1 s/);
  w.networkConfigured();
  t.equal(r.started.length, 2, 'a late milestone starts nothing again');
});

t.test('a config that needs plugins of the second wave starts them at once; the milestone the others', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network], rest: [storage, time], start: r.start, log: r.log, capMs: 5000 });
  w.startEnded('network');
  w.promote(['network', 'time'], 'the machine config needs them');
  t.same(r.started, [['network'], ['time']], 'only the waiting one named starts; the first wave is not started again');
  w.promote(['time'], 'again');
  t.equal(r.started.length, 2, 'once each');
  w.networkConfigured();
  t.equal(r.started.length, 2, 'the rest wait for the promoted one to run');
  w.startEnded('time');
  t.same(r.started, [['network'], ['time'], ['storage']], 'the milestone starts the ones left, not the promoted again');
  t.same(r.lines.slice(1), ['plugins: starting time: the machine config needs them',
    'plugins: starting storage: the network is configured']);
  w.promote(['storage'], 'late');
  t.equal(r.started.length, 3, 'after the second wave nothing is left to promote');
});

t.test('the second wave waits for the first to run (or fail to), but not past the cap', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network, platform], rest: [storage], start: r.start, log: r.log, capMs: 150 });
  w.startEnded('platform');
  w.networkConfigured();
  await sleep(50);
  t.same(r.started, [['network', 'platform']], 'network is not running yet');
  w.startEnded('network');
  t.same(r.started, [['network', 'platform'], ['storage']], 'it runs: the second wave starts');
  t.match(r.lines[1], /starting storage: the network is configured$/);
  const r2 = recorder();
  const w2 = startInWaves({ first: [network, platform], rest: [storage], start: r2.start, log: r2.log, capMs: 100 });
  w2.startEnded('network');
  w2.networkConfigured();
  await sleep(150);
  t.same(r2.started, [['network', 'platform'], ['storage']], 'a plugin that never runs holds the rest until the cap');
  t.match(r2.lines[1], /starting storage: the network is configured; platform still starting after 0\.1 s/);
});

t.test('promoting every waiting plugin ends the wait: the cap starts nothing more', async (t) => {
  const r = recorder();
  startInWaves({ first: [network], rest: [storage], start: r.start, log: r.log, capMs: 50 }).promote(['storage'], 'x');
  await sleep(100);
  t.same(r.started, [['network'], ['storage']]);
});

t.test('cancelled (the machine stops): the rest never start', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network], rest: [storage], start: r.start, log: r.log, capMs: 50 });
  w.cancel();
  w.networkConfigured();
  await sleep(100);
  t.same(r.started, [['network']]);
});

t.test('one wave when nothing goes first (a host) or nothing is left: all at once, nothing said', async (t) => {
  for (const [first, rest] of [[[], [storage, time]], [[network, storage], []]] as const) {
    const r = recorder();
    startInWaves({ first, rest, start: r.start, log: r.log, capMs: 50 });
    await sleep(80);
    t.same(r.started, [[...first, ...rest].map((p) => p.name)]);
    t.same(r.lines, []);
  }
});
