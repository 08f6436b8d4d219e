// Engine tests against the built single executable (`appliance serve`): plugins as
// real processes on a real unix socket, the API over real gRPC.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe } from './serve-harness.ts';
import { FAST_BACKOFF } from './supervisor.ts';
import { until } from '../../cosi/conformance/converge.ts';
import { RemoteState } from '../../cosi/remote/client.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { DEFINITION_TYPE } from '../../cosi/meta/definition.ts';
import { type PluginStatusSpec } from '../../machinery/model/runtime-types.ts';
import { startChronyd } from '../../scripts/lib/chronyd.ts';
import {
  DHCP_LEASE_TYPE, ISSUE_TYPE, MOTD_TYPE, PLUGIN_STATUS_TYPE, TEST_REPORT_TYPE, TIME_NS, TIME_SERVER_SPEC_TYPE,
  TIME_STATUS_TYPE, VERSION_TYPE,
} from '../../proto/gen/resource-types.ts';

const { exe } = artifacts();
const served = await startServe(exe, ['--test-plugins', '--fast-backoff']);
t.teardown(() => served.stop());
const { port, socket } = served;
const api = served.client();
t.teardown(() => api.close());

const status = async (name: string) =>
  (await api.get({ namespace: 'runtime', type: PLUGIN_STATUS_TYPE, id: name })).spec as PluginStatusSpec;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('every type served has a resource definition', async (t) => {
  const defs = (await api.list({ namespace: 'meta', type: DEFINITION_TYPE })).map((r) => r.metadata.id);
  for (const type of [VERSION_TYPE, PLUGIN_STATUS_TYPE, MOTD_TYPE, ISSUE_TYPE, TEST_REPORT_TYPE, DEFINITION_TYPE]) {
    t.ok(defs.includes(type.toLowerCase()), type);
  }
});

t.test('a plugin killed with SIGKILL is restarted, the others are not', async (t) => {
  const before = await until(async () => (await status('time')).state, 'running');
  t.equal(before, 'running');
  const time = await status('time');
  const writer = await status('test-writer');
  t.ok(alive(time.pid), `time plugin runs as pid ${time.pid}`);
  process.kill(time.pid, 'SIGKILL');
  const after = await until(async () => {
    const s = await status('time');
    return s.state === 'running' && s.pid !== time.pid && s.restarts === time.restarts + 1;
  }, true);
  t.ok(after, 'restarted with a new pid, restarts + 1');
  const s = await status('time');
  t.equal(s.lastExit?.signal, 'SIGKILL', 'last exit says SIGKILL');
  t.equal((await status('test-writer')).pid, writer.pid, 'test-writer kept its process');
});

t.test('a plugin that only transforms state runs inside the engine: no process, its banner rendered', async (t) => {
  const issue = await status('issue');
  t.equal(issue.state, 'running');
  t.equal(issue.pid, served.process.pid, 'its status names the engine\'s process');
  t.same(issue.outputs, [ISSUE_TYPE], 'and what it writes');
  await api.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'in-engine' }, { text: 'rendered here' }));
  t.teardown(() => api.destroy({ namespace: 'config', type: MOTD_TYPE, id: 'in-engine' }).catch(() => undefined));
  const banner = await until(async () => ((await api.get({ namespace: 'runtime', type: ISSUE_TYPE, id: 'banner' }))
    .spec as { text: string }).text.includes('rendered here'), true);
  t.ok(banner, 'the Motd is in the banner');
  const owner = (await api.get({ namespace: 'runtime', type: ISSUE_TYPE, id: 'banner' })).metadata.owner;
  t.equal(owner, 'issue-status', 'written by its controller, as from a process');
});

t.test('a plugin writing a type it does not own is refused', async (t) => {
  const want = { code: 'permission-denied', finalizer: 'accepted', specChange: 'permission-denied' };
  const report = await until(async () =>
    (await api.get({ namespace: 'runtime', type: TEST_REPORT_TYPE, id: 'forbidden-write' })).spec, want);
  t.same(report, want, 'create refused; a finalizer on a foreign type accepted (strong inputs); a spec change refused');
  await t.rejects(api.get({ namespace: 'runtime', type: VERSION_TYPE, id: 'forged' }), { code: 'not-found' },
    'nothing was written');
});

t.test('a crash loop backs off', async (t) => {
  const first = await until(async () => (await status('test-crasher')).restarts >= 2, true);
  t.ok(first);
  const a = await status('test-crasher');
  const started = Date.now();
  // The next restart, however long a loaded host takes to start the process and see it crash.
  await until(async () => (await status('test-crasher')).restarts > a.restarts, true, 30_000);
  const b = await status('test-crasher');
  const seconds = (Date.now() - started) / 1000;
  t.equal(b.lastExit?.code, 3);
  t.ok(b.restarts > a.restarts, 'still restarted');
  // --fast-backoff caps the wait, reached after about 16 s of crashing: a loaded host may get there first.
  const capped = a.backoffMs === FAST_BACKOFF.maxMs && b.backoffMs === FAST_BACKOFF.maxMs;
  t.ok(capped || (b.backoffMs ?? 0) > (a.backoffMs ?? 0),
    `backoff grows to its cap: ${a.backoffMs}ms -> ${b.backoffMs}ms`);
  t.ok(b.restarts - a.restarts <= Math.max(4, seconds * 3),
    `a few restarts a second at most (${a.restarts} -> ${b.restarts} in ${seconds.toFixed(1)} s)`);
});

t.test('a process the engine did not start cannot use the plugin socket', async (t) => {
  const intruder = new RemoteState(`unix://${socket}`, { timeoutMs: 3000 });
  t.teardown(() => intruder.close());
  await t.rejects(intruder.get({ namespace: 'runtime', type: VERSION_TYPE, id: 'appliance' }), StateError);
  // The engine's log reaches this process through a pipe: the refusal can arrive before the line does.
  const said = await until(async () => /plugin socket: refused pid \d+/.test(served.log()), true);
  t.ok(said, 'the engine logged the refusal');
});

t.test('API -> plugin -> API: a Motd shows up in the Issue banner', async (t) => {
  await api.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'hello' }, { text: 'Hello from the test' }));
  const text = await until(async () =>
    ((await api.get({ namespace: 'runtime', type: ISSUE_TYPE, id: 'banner' })).spec as { text: string })
      .text.includes('Hello from the test'), true);
  t.ok(text, 'banner includes the motd');
  await t.rejects(api.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'bad' }, { text: 42 })),
    { code: 'invalid-argument', message: /spec.text: must be a string/ });
  await t.rejects(api.create(newResource({ namespace: 'config', type: 'Nopes.x.dev', id: 'n' }, {})),
    { code: 'invalid-argument', message: /unknown resource type/ });
  await t.rejects(api.create(newResource({ namespace: 'nowhere', type: MOTD_TYPE, id: 'n' }, { text: 'x' })),
    { code: 'invalid-argument', message: /unknown namespace "nowhere"/ });
  await t.rejects(api.create(newResource({ namespace: 'runtime', type: VERSION_TYPE, id: 'appliance' }, {})),
    { code: 'permission-denied', message: /written by its controller only/ }, 'a status is no user\'s to write');
});

t.test('plugins keep only their declared capabilities, with no_new_privs', async (t) => {
  // What this host lets a process hold bounds what a plugin keeps (a container may withhold some).
  const host = BigInt(`0x${/^CapBnd:\s+([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`);
  const bits = (...n: number[]) => n.reduce((m, b) => m | (1n << BigInt(b)), 0n) & host;
  for (const [name, want] of [
    ['test-reader', 0n], ['network', bits(10, 12, 13, 21)], ['system', bits(12, 16, 19, 21)], ['storage', bits(21, 24)],
    ['time', bits(25)],
  ] as const) {
    t.equal(await until(async () => (await status(name)).state, 'running'), 'running', `${name} runs`);
    const text = readFileSync(`/proc/${(await status(name)).pid}/status`, 'utf8');
    const field = (k: string) => BigInt(`0x${new RegExp(`^${k}:\\s+([0-9a-f]+)`, 'm').exec(text)![1]}`);
    t.equal(field('CapEff'), want, `${name}: effective capabilities`);
    t.equal(field('CapPrm'), want, `${name}: permitted`);
    t.equal(field('CapBnd'), want, `${name}: bounding set (nothing to regain by exec)`);
    t.match(text, /^NoNewPrivs:\s+1$/m, `${name}: no_new_privs`);
    t.match(text, /^Seccomp:\s+2$/m, `${name}: a seccomp filter`);
  }
});

t.test('on a host the time plugin measures but never sets the clock', async (t) => {
  t.equal(await until(async () => (await status('time')).state, 'running'), 'running');
  const clock = () => api.get({ namespace: TIME_NS, type: TIME_STATUS_TYPE, id: 'clock' })
    .then((r) => r.spec as Record<string, unknown>);
  const idle = { synced: false, source: 'none', error: 'no time servers configured (TimeServerSpec)' };
  t.same(await until(clock, idle), idle, 'no RTC read on a host, no servers by default');
  const chrony = await startChronyd();
  t.teardown(() => chrony.stop());
  const server = `127.0.0.1:${chrony.port}`;
  await api.create(newResource({ namespace: TIME_NS, type: TIME_SERVER_SPEC_TYPE, id: 'user' }, { servers: [server] }));
  const measured = await until(async () => typeof (await clock()).offsetMs === 'number', true);
  t.ok(measured, 'the offset was measured');
  t.match(await clock(), {
    synced: false, server, error: 'setting the clock: host mode: the host clock is left alone',
  });
});

t.test('on a host the network plugin starts no DHCP client', async (t) => {
  t.equal(await until(async () => (await status('network')).state, 'running'), 'running');
  await new Promise((r) => setTimeout(r, 1500));
  t.same(await api.list({ namespace: 'network', type: DHCP_LEASE_TYPE }), [], 'no DhcpLease: no client ran');
  t.ok((await api.list({ namespace: 'network', type: 'LinkStatuses.net.appliance.dev' })).length > 0,
    'the plugin does run (links observed)');
  const env = readFileSync(`/proc/${(await status('network')).pid}/environ`, 'utf8').split('\0');
  t.ok(env.includes('COSI_HOST_MODE=1'), 'started in host mode');
});
