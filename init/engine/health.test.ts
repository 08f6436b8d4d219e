// health: each check says what fails, naming the plugin, the config state or the missing address; a plugin
// the engine runs but that has no status yet is not healthy (the moment before the plugins start is not);
// a DHCP link needs its bound lease's address (the IPv6 link-local address every up link has is not one).
// Milestones: plugins when all run, network when the addresses are there and each lease's default route, config
// when it is applied and the plugins acting on it run.
import t from 'tap';
import type { ExtensionStatusSpec, PluginStatusSpec } from '../../proto/gen/spec-types.ts';
import { evaluateHealth, healthController, reachedMilestones, type HealthFacts } from './health.ts';
import type { HealthStatusSpec } from '../../proto/gen/spec-types.ts';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import { until } from '../../cosi/conformance/converge.ts';
import { HEALTH_STATUS_TYPE, PLUGIN_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';
import { HEALTH_ID } from '../../machinery/model/singleton-ids.ts';

const running = (name: string) => ({ name, spec: { state: 'running', pid: 9, restarts: 0 } as PluginStatusSpec });
const fine: HealthFacts = {
  apiServing: true, expectedPlugins: ['network', 'storage'], configPlugins: ['network', 'storage'],
  plugins: [running('network'), running('storage')],
  config: { state: 'applied', resources: 3 } as HealthFacts['config'],
  wantAddresses: [{ link: 'eth0', address: '10.0.2.99/24' }], dhcpLinks: ['eth1'],
  declaredAddresses: [{ link: 'eth0', address: '10.0.2.99/24' }],
  leases: new Map([['eth1', { state: 'bound', address: '10.0.3.15/24', gateway: '10.0.3.2' }]]),
  defaultRouteLinks: ['eth1'],
  linkAddresses: new Map([['eth0', ['10.0.2.15/24', '10.0.2.99/24']], ['eth1', ['10.0.3.15/24', 'fe80::1/64']]]),
  time: { servers: ['10.0.2.2'], synced: true, server: '10.0.2.2' },
  declaredMounts: ['/mnt/data'], mounts: new Map([['/mnt/data', { state: 'applied' }]]),
};
const failing = (f: HealthFacts) => evaluateHealth(f).filter((c) => !c.ok).map((c) => `${c.name}: ${c.message}`);

t.test('a ready machine passes every check', async (t) => {
  t.same(failing(fine), []);
  t.same(evaluateHealth(fine).map((c) => c.name),
    ['api', 'plugins', 'config', 'addresses', 'time', 'disks', 'extensions']);
  t.same(failing({ ...fine, time: { servers: [], synced: false }, declaredMounts: [], mounts: new Map() }), [],
    'no time server and no mounts declared: nothing to wait for');
  t.same(failing({ ...fine, time: undefined }), [], 'before the time plugin reports, no servers are known');
});

t.test('extensions: a critical one must run and not keep restarting; the others are summed up', async (t) => {
  const ext = (name: string, phase: string, critical: boolean, restarts = 0, error = '') =>
    ({ name, spec: { phase, critical, restarts, error } as ExtensionStatusSpec });
  const summary = (f: HealthFacts) => evaluateHealth(f).find((c) => c.name === 'extensions')!;
  t.same(summary(fine), { name: 'extensions', ok: true, message: 'none declared' });
  t.same(summary({ ...fine, extensions: [ext('web', 'running', true), ext('helper', 'failed', false, 0, 'no image')] }),
    { name: 'extensions', ok: true, message: 'web running (critical), helper failed' },
    'a plain extension that fails: said, not a failure of the machine');
  t.same(failing({ ...fine, extensions: [ext('web', 'crashing', true, 1, 'exited (code 1)\nmore')] }),
    ['extensions: web (critical) is crashing: exited (code 1)']);
  t.same(failing({ ...fine, extensions: [ext('web', 'running', true, 3)] }),
    ['extensions: web (critical) restarted 3 times since it started'], 'running now, but crash-looping');
  t.same(failing({ ...fine, extensions: [ext('web', 'starting', true), ext('db', 'fetching', true)] }),
    ['extensions: web (critical) is starting; db (critical) is fetching']);
});

t.test('each failure names what is wrong', async (t) => {
  t.same(failing({ ...fine, plugins: [] }), ['plugins: network has not started; storage has not started'],
    'before the plugins start, not healthy');
  const crashing = { name: 'network', spec: {
    state: 'backoff', pid: 0, restarts: 4, lastExit: { code: 1, at: '' },
  } as PluginStatusSpec };
  t.same(failing({ ...fine, plugins: [crashing, running('storage')] }),
    ['plugins: network is backoff (4 restarts, last exit code 1)']);
  const waiting = { name: 'storage', spec: { state: 'waiting', pid: 0, restarts: 0 } as PluginStatusSpec };
  t.same(failing({ ...fine, plugins: [running('network'), waiting] }),
    ['plugins: storage waits for the second wave (plugin-waves.ts) before it starts'], 'the second wave, said as such');
  t.same(failing({ ...fine, config: { state: 'maintenance' } as HealthFacts['config'] }),
    ['config: the machine config is maintenance']);
  t.same(failing({ ...fine, linkAddresses: new Map([['eth0', ['10.0.2.15/24']]]) }),
    ['addresses: eth0 lacks 10.0.2.99/24; eth1 lacks 10.0.3.15/24 (DHCP)']);
  const linkLocalOnly = new Map([['eth0', ['10.0.2.99/24']], ['eth1', ['fe80::1/64']]]);
  t.same(failing({ ...fine, linkAddresses: linkLocalOnly, leases: new Map([['eth1', { state: 'selecting' }]]) }),
    ['addresses: eth1 has no DHCP lease (selecting)'], 'a link-local address is not a DHCP lease');
  t.same(failing({ ...fine, leases: new Map() }), ['addresses: eth1 has no DHCP lease (no client yet)']);
  t.same(failing({ ...fine, apiServing: false }), ['api: the API is not serving']);
  t.same(failing({ ...fine, time: { servers: ['a.example', 'b.example'], synced: false } }),
    ['time: not synced with a.example, b.example yet']);
  t.same(failing({ ...fine, declaredMounts: ['/mnt/data', '/mnt/logs'],
    mounts: new Map([['/mnt/data', { state: 'pending', error: 'no block device labelled DATA' }]]) }),
  ['disks: /mnt/data is pending (no block device labelled DATA); /mnt/logs is not handled yet']);
});

t.test('milestones: plugins when every plugin runs; network when addresses and the lease\'s default route are in',
  async (t) => {
    const reached = (f: HealthFacts) => reachedMilestones(f, evaluateHealth(f));
    t.same(reached(fine), ['plugins', 'network', 'config']);
    t.same(reached({ ...fine, plugins: [running('network')] }), ['network'], 'storage has not started');
    t.same(reached({ ...fine, defaultRouteLinks: [] }), ['plugins', 'config'],
      'the lease\'s gateway is not a route yet');
    t.same(reached({ ...fine, defaultRouteLinks: [], leases: new Map([['eth1', { state: 'bound',
      address: '10.0.3.15/24' }]]) }), ['plugins', 'network', 'config'], 'a lease without a gateway needs no route');
    t.same(reached({ ...fine, leases: new Map([['eth1', { state: 'requesting' }]]) }), ['plugins', 'config'],
      'the config waits for no lease');
    t.same(reached({ ...fine, wantAddresses: [], dhcpLinks: [] }), ['plugins', 'config'],
      'no network configured: no network milestone');
  });

t.test('milestones: config when a config of some resources is applied and its addresses are on their links',
  async (t) => {
    const reached = (f: HealthFacts) => reachedMilestones(f, evaluateHealth(f)).filter((m) => m === 'config');
    t.same(reached(fine), ['config']);
    t.same(reached({ ...fine, config: { state: 'trying', resources: 3 } as HealthFacts['config'] }), [], 'tried');
    t.same(reached({ ...fine, config: { state: 'applied', resources: 0 } as HealthFacts['config'] }), [],
      'an empty config is no config');
    t.same(reached({ ...fine, config: undefined }), []);
    t.same(reached({ ...fine, linkAddresses: new Map([['eth0', []]]) }), [], 'an address not on its link yet');
    t.same(reached({ ...fine, wantAddresses: [], linkAddresses: new Map([['eth0', []]]) }), [],
      'declared but not merged yet (the network plugin has not seen it): not applied');
    t.same(reached({ ...fine, plugins: [running('network')] }), [], 'a plugin the config needs has not started');
    t.same(reached({ ...fine, configPlugins: ['network'], plugins: [running('network')] }), ['config'],
      'a plugin the config does not need is not waited for');
    const waitingStorage = { name: 'storage', spec: { state: 'waiting', pid: 0, restarts: 0 } as PluginStatusSpec };
    t.same(reached({ ...fine, plugins: [running('network'), waitingStorage] }), [],
      'one that waits for the second wave is not running');
  });

t.test('the controller: Health written by the engine as plugins start; each milestone once, however often '
  + 'it passes again',
  async (t) => {
    const s = new MemoryState();
    const milestones: string[] = [];
    const runtime = new ControllerRuntime(s, { log: () => ({ info() {}, warn() {}, error() {} }) });
    runtime.register(healthController({
      owner: 'engine', apiServing: () => true, expectedPlugins: ['network'], onMilestone: (m) => milestones.push(m),
    }));
    runtime.start();
    t.teardown(() => runtime.stop());
    await runtime.watching();
    const health = { namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID };
    const checksOf = async () => {
      const r = await s.get(health).catch(() => undefined);
      return r && { owner: r.metadata.owner, ...(r.spec as HealthStatusSpec) };
    };
    t.match(await until(async () => (await checksOf())?.healthy, false), false);
    t.match((await checksOf())!.checks?.find((c) => c.name === 'plugins'),
      { ok: false, message: 'network has not started' }, 'no plugin yet');
    t.equal((await checksOf())!.owner, 'engine');
    const plugin = { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: 'network' };
    await s.create(newResource(plugin, { state: 'running', pid: 9, restarts: 0 }));
    t.equal(await until(async () => (await checksOf())?.checks?.find((c) => c.name === 'plugins')?.ok, true), true,
      'the plugin\'s status wakes it');
    t.same(milestones, ['plugins']);
    const cur = await s.get(plugin);
    await s.update({ ...cur, spec: { state: 'backoff', pid: 0, restarts: 1 } });
    await until(async () => (await checksOf())?.checks?.find((c) => c.name === 'plugins')?.ok, false);
    await s.update({ ...(await s.get(plugin)), spec: { state: 'running', pid: 10, restarts: 1 } });
    await until(async () => (await checksOf())?.checks?.find((c) => c.name === 'plugins')?.ok, true);
    t.same(milestones, ['plugins'], 'a milestone is reached once, however often its checks pass again');
  });
