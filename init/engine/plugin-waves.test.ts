import t from 'tap';
import type { Logger } from '../../machinery/log.ts';
import { lookForConfig, startInWaves } from './plugin-waves.ts';
import type { UserDataSpec } from '../../proto/gen/spec-types.ts';
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

t.test('the first wave at once; the rest once it runs, once', async (t) => {
  const r = recorder();
  const w = startInWaves({
    first: [network, platform], rest: [storage, time], start: r.start, wait: r.wait, log: r.log, capMs: 500,
  });
  t.same(r.waiting, [['storage', 'time']], 'the second wave is told it waits, before anything starts');
  t.same(r.started, [['network', 'platform']]);
  w.startEnded('network');
  t.same(r.started, [['network', 'platform']], 'platform is not running yet');
  w.startEnded('platform');
  t.same(r.started, [['network', 'platform'], ['storage', 'time']], 'both run: the second wave starts');
  w.startEnded('platform');
  w.startEnded('storage');
  await sleep(600); // past the cap: nothing more
  t.same(r.started, [['network', 'platform'], ['storage', 'time']]);
  t.same(r.lines, [
    'plugins: network, platform first; storage, time once those run (0.5 s at most)',
    'plugins: starting storage, time: network, platform run (or could not start)',
  ]);
});

t.test('a first wave that never runs holds the rest until the cap, which says who is still starting', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network, platform], rest: [storage], start: r.start, log: r.log, capMs: 100 });
  w.startEnded('network');
  await sleep(50);
  t.same(r.started, [['network', 'platform']], 'not before the cap');
  await sleep(100);
  t.same(r.started, [['network', 'platform'], ['storage']]);
  t.match(r.lines[1], /starting storage: waited 0\.1 s for platform to run$/);
  w.startEnded('platform');
  t.equal(r.started.length, 2, 'a late start starts nothing again');
});

t.test('a config that needs plugins of the second wave starts them at once; the rest wait for them too',
  async (t) => {
    const r = recorder();
    const w = startInWaves({ first: [network], rest: [storage, time], start: r.start, log: r.log, capMs: 5000 });
    w.promote(['network', 'time'], 'the machine config needs them');
    t.same(r.started, [['network'], ['time']], 'only the waiting one named starts; the first wave is not again');
    w.promote(['time'], 'again');
    t.equal(r.started.length, 2, 'once each');
    w.startEnded('network');
    t.equal(r.started.length, 2, 'the rest wait for the promoted one to run');
    w.startEnded('time');
    t.same(r.started, [['network'], ['time'], ['storage']], 'then the ones left start, not the promoted again');
    t.same(r.lines.slice(1), ['plugins: starting time: the machine config needs them',
      'plugins: starting storage: network, time run (or could not start)']);
    w.promote(['storage'], 'late');
    t.equal(r.started.length, 3, 'after the second wave nothing is left to promote');
  });

t.test('a config on its way kept, or refused (settled, nothing applied), starts the rest once the first runs',
  async (t) => {
    const r = recorder();
    const w = startInWaves({ first: [network, platform], rest: [storage], start: r.start, log: r.log, capMs: 5000,
      configOnItsWay: 'here' });
    w.configSettled();
    t.same(r.started, [['network', 'platform']], 'settled, but the first wave still starts');
    w.startEnded('platform');
    w.startEnded('network');
    t.same(r.started, [['network', 'platform'], ['storage']]);
    t.equal(r.lines.at(-1), 'plugins: starting storage: network, platform run (or could not start); '
      + 'the machine config is settled');
  });

t.test('a config applied before the first wave runs: its plugins at once, the rest after all of them', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network, platform], rest: [storage, time], start: r.start, log: r.log,
    capMs: 5000, configOnItsWay: 'here' });
  w.promote(['time'], 'the machine config needs them');
  t.same(r.started, [['network', 'platform'], ['time']]);
  w.startEnded('time');
  w.startEnded('network');
  t.same(r.started.length, 2, 'platform still starts');
  w.startEnded('platform');
  t.same(r.started, [['network', 'platform'], ['time'], ['storage']]);
});

t.test('a start ended of a plugin that was not starting changes nothing', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network], rest: [storage], start: r.start, log: r.log, capMs: 5000 });
  w.startEnded('storage');
  w.startEnded('nosuch');
  t.same(r.started, [['network']], 'network still starts');
  w.startEnded('network');
  t.same(r.started, [['network'], ['storage']]);
  t.match(r.lines[1], /starting storage: network runs \(or could not start\)$/);
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
  w.startEnded('network');
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

t.test('lookForConfig: asked with the kernel parameters; no look is nothing; one that fails counts as here',
  async (t) => {
    const r = recorder();
    const params = { 'appliance.config.inline': 'e30=' };
    t.same(await lookForConfig({ name: 'network' }, params, r.log), {});
    const asked: unknown[] = [];
    const read = { source: 'cmdline-inline', content: '{}' } as UserDataSpec;
    t.same(await lookForConfig({ name: 'platform', lookForConfig: async (m) => {
      asked.push(m.params);
      return 'appliance.config.inline' in m.params ? { userData: read } : {};
    } }, params, r.log), { userData: read });
    t.same(asked, [params], 'asked once, with the parameters');
    t.same(await lookForConfig({ name: 'platform', lookForConfig: async () => ({ comes: 'network' }) }, params, r.log),
      { comes: 'network' });
    t.same(await lookForConfig({ name: 'platform', lookForConfig: async () => {
      throw new Error('/sys/firmware: EIO');
    } }, params, r.log), { comes: 'here' });
    t.same(r.lines, ['WARN plugins: looking for a config of platform\'s: /sys/firmware: EIO; it starts first']);
    r.lines.length = 0;
    t.same(await lookForConfig({ name: 'platform', lookForConfig: () => new Promise(() => {}) }, params, r.log, 50),
      { comes: 'here', why: 'no answer in 0.05 s' }, 'a look that hangs (a slow CD-ROM) is not waited for');
    t.same(await lookForConfig({ name: 'platform', lookForConfig: async () => ({ comes: 'here', why: 'fw-cfg: EIO' }) },
      params, r.log), { comes: 'here', why: 'fw-cfg: EIO' });
    t.same(r.lines, ['plugins: looking for a config of platform\'s: no answer in 0.05 s; it starts first',
      'plugins: looking for a config of platform\'s: fw-cfg: EIO; it starts first']);
  });

t.test('a config on its way: the rest wait for it to be applied, and for its plugins to run', async (t) => {
  const r = recorder();
  const w = startInWaves({ first: [network, platform], rest: [storage, time], start: r.start, log: r.log,
    capMs: 5000, configOnItsWay: 'here' });
  t.equal(r.lines[0], 'plugins: network, platform first; storage, time once those run and the machine config is '
    + 'settled (5 s at most)');
  w.networkConfigured();
  w.startEnded('network');
  w.startEnded('platform');
  t.same(r.started, [['network', 'platform']], 'both run, the network is up, the config read here is not applied '
    + 'yet: the rest wait');
  w.promote(['network', 'time'], 'the machine config needs them');
  t.same(r.started, [['network', 'platform'], ['time']], 'the config\'s plugin first');
  w.startEnded('time');
  t.same(r.started, [['network', 'platform'], ['time'], ['storage']], 'then the rest');
  t.equal(r.lines.at(-1), 'plugins: starting storage: network, platform, time run (or could not start); '
    + 'a machine config is in place');
});

t.test('a config on its way that needs nothing waiting, or one over the network that never comes: applied, or the '
  + 'network, starts the rest', async (t) => {
    const r = recorder();
    const w = startInWaves({ first: [network, platform], rest: [storage], start: r.start, log: r.log, capMs: 5000,
      configOnItsWay: 'here' });
    w.startEnded('network');
    w.startEnded('platform');
    w.promote(['network'], 'the machine config needs them');
    t.same(r.started, [['network', 'platform'], ['storage']], 'applied, nothing of it waiting: the rest start');
    const r2 = recorder();
    const w2 = startInWaves({ first: [network, platform], rest: [storage], start: r2.start, log: r2.log,
      capMs: 5000, configOnItsWay: 'network' });
    t.equal(r2.lines[0], 'plugins: network, platform first; storage once those run and the machine config is settled '
      + '(or the network configured) (5 s at most)');
    w2.networkConfigured();
    t.same(r2.started, [['network', 'platform']], 'the network is up, but the first wave still starts');
    w2.startEnded('network');
    w2.startEnded('platform');
    t.same(r2.started, [['network', 'platform'], ['storage']], 'no config yet, the network up: the rest start');
    const r3 = recorder();
    const w3 = startInWaves({ first: [network, platform], rest: [storage], start: r3.start, log: r3.log,
      capMs: 100, configOnItsWay: 'here' });
    w3.startEnded('network');
    w3.startEnded('platform');
    await sleep(150);
    t.same(r3.started, [['network', 'platform'], ['storage']], 'neither: the cap');
    t.equal(r3.lines.at(-1), 'plugins: starting storage: waited 0.1 s for the machine config to be settled');
  });
