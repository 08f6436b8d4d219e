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
  w.networkConfigured();
  w.networkConfigured();
  await sleep(600); // past the cap: nothing more
  t.same(r.started, [['network', 'platform'], ['storage', 'time']]);
  t.same(r.lines, [
    'plugins: network, platform first; storage, time once the network is configured (0.5 s at most)',
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
