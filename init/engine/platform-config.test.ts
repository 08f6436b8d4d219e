// The platform's user data taken once each: what PID 1 read before the plugins started (Plugin.lookForConfig), then
// the UserData the platform plugin writes. The machine config is a recorder here (its own tests and qemu/config.test
// apply real ones); the UserData comes through a real in-memory state and controller runtime.
import t from 'tap';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import type { UserDataSpec } from '../../proto/gen/spec-types.ts';
import { PLATFORM_NS, USER_DATA_TYPE } from '../../proto/gen/resource-types.ts';
import { USER_DATA_ID } from '../../machinery/model/singleton-ids.ts';
import type { Logger } from '../../machinery/log.ts';
import type { MachineConfig } from './config/machine-config.ts';
import { platformConfig, userDataTaker } from './platform-config.ts';

const userData = (digest: string, over: Partial<UserDataSpec> = {}): UserDataSpec => ({
  source: 'fw-cfg', instanceId: '', format: 'config', digest, problem: '', ignored: [], instanceData: '',
  content: `metadata: {type: hostnamespec, id: h}\nspec: {hostname: h-${digest}}\n`, ...over,
});

function machine() {
  const applied: string[] = [];
  const refused: string[] = [];
  const config = {
    apply: async (req: { bytes: Uint8Array; source: string }) => {
      applied.push(`${req.source}: ${new TextDecoder().decode(req.bytes).trim().split('\n').pop()}`);
    },
    refuse: async (source: string, problems: string[]) => {
      refused.push(`${source}: ${problems.join('; ')}`);
    },
  } as unknown as MachineConfig;
  const lines: string[] = [];
  const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(`WARN ${m}`),
    error: (m: string) => lines.push(`ERROR ${m}`) } as unknown as Logger;
  return { config, applied, refused, lines, log };
}

t.test('the same user data is taken once; other user data again', async (t) => {
  const m = machine();
  const taker = userDataTaker({ config: m.config, persisted: undefined, log: m.log });
  t.equal(await taker.take(userData('a')), true);
  t.equal(await taker.take(userData('a')), false, 'the same again is no news');
  t.same(m.applied, ['fw-cfg: spec: {hostname: h-a}']);
  t.equal(await taker.take(userData('b')), true);
  t.equal(await taker.take(userData('b', { problem: 'is not UTF-8' })), true, 'a problem tells it apart too');
  t.same(m.applied, ['fw-cfg: spec: {hostname: h-a}', 'fw-cfg: spec: {hostname: h-b}']);
  t.same(m.refused, ['fw-cfg: fw-cfg: user data is not UTF-8']);
});

t.test('a persisted config of the same instance is kept', async (t) => {
  const m = machine();
  const persisted = { text: '', source: 'fw-cfg', savedAt: '2026-12-07T00:00:00Z' };
  const taker = userDataTaker({ config: m.config, persisted, log: m.log });
  t.equal(await taker.take(userData('a')), true);
  t.same(m.applied, []);
  t.match(m.lines, [/the persisted config is kept: neither it nor the platform names an instance/]);
});

t.test('what PID 1 read first and the platform plugin then writes is applied once; a change after it is taken',
  async (t) => {
    const m = machine();
    const taker = userDataTaker({ config: m.config, persisted: undefined, log: m.log });
    let settled = 0;
    const h = await controllerHarness(t, [platformConfig({ taker, owner: 'engine', onSettled: () => settled++ })]);
    t.equal(await taker.take(userData('a')), true, 'read before the plugins start');
    const p = { namespace: PLATFORM_NS, type: USER_DATA_TYPE, id: USER_DATA_ID };
    await h.create(p, userData('a'));
    await new Promise((r) => setTimeout(r, 100));
    t.same(m.applied, ['fw-cfg: spec: {hostname: h-a}'], 'the plugin\'s UserData, the same, is no news');
    t.equal(settled, 0);
    await h.update(p, userData('b'));
    t.same(await h.until(() => m.applied.length, 2), 2);
    t.equal(m.applied[1], 'fw-cfg: spec: {hostname: h-b}');
    t.equal(await h.until(() => settled, 1), 1, 'settled once taken');
  });
