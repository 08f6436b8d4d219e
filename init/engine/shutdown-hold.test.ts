// A shutdown others can hold, against the built engine (`appliance serve`, which a PowerRequest
// ends as it would power a machine off) over mutual TLS with real clients: one that holds for 5 s,
// one that never lets go (the grace period ends it), --force, and the roles that may hold.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { join } from 'node:path';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe, type Served } from './serve-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { addFinalizer, removeFinalizer } from '../../cosi/state/finalizers.ts';
import { type MachineStatusSpec, type PowerRequestSpec } from '../../machinery/model/runtime-types.ts';
import { runProgram } from '../../scripts/lib/run-program.ts';
import {
  CONFIG_NS, MACHINE_STATUS_TYPE, POWER_REQUEST_TYPE, RUNTIME_NS, SHUTDOWN_REQUEST_TYPE,
} from '../../proto/gen/resource-types.ts';
import { MACHINE_STATUS_ID, SHUTDOWN_REQUEST_ID } from '../../machinery/model/singleton-ids.ts';

const a = artifacts();
const SHUTDOWN = { namespace: RUNTIME_NS, type: SHUTDOWN_REQUEST_TYPE, id: SHUTDOWN_REQUEST_ID };
const MACHINE = { namespace: RUNTIME_NS, type: MACHINE_STATUS_TYPE, id: MACHINE_STATUS_ID };

async function engine(t: Test): Promise<Served> {
  const s = await startServe(a.exe, ['--no-plugins']);
  t.teardown(() => s.stop());
  return s;
}

const power = (s: Served, id: string, spec: Partial<PowerRequestSpec>) => {
  const c = s.client();
  return c.create(newResource({ namespace: CONFIG_NS, type: POWER_REQUEST_TYPE, id },
    { action: 'poweroff', graceSeconds: 0, force: false, ...spec })).finally(() => c.close());
};
const exited = (s: Served) => (s.process.exitCode !== null ? Promise.resolve()
  : once(s.process, 'exit').then(() => {}));

t.test('a holder delays the shutdown until it lets go; MachineStatus says stopping, why, and who holds', async (t) => {
  const s = await engine(t);
  const holder = s.client('operator');
  t.teardown(() => holder.close());
  t.match((await holder.get(MACHINE)).spec, { stage: 'running' }, 'running before');
  await addFinalizer(holder, SHUTDOWN, 'db-flush');
  const seen: MachineStatusSpec[] = [];
  const w = await holder.watch(MACHINE, {}, (events) => {
    for (const e of events) seen.push(e.resource.spec as MachineStatusSpec);
  });
  const t0 = Date.now();
  await power(s, 'hold-test', { action: 'reboot' });
  for (let i = 0; i < 50 && !seen.some((m) => m.stage === 'stopping'); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  t.match(seen.find((m) => m.stage === 'stopping'),
    { action: 'reboot', reason: 'API power request "hold-test"', heldBy: ['db-flush'] }, 'stopping, held');
  const request = (await holder.get(SHUTDOWN)).spec as { action: string; reason: string; deadline: string };
  t.match(request, { action: 'reboot', reason: 'API power request "hold-test"' });
  t.ok(Date.parse(request.deadline) - t0 > 25_000, `the default grace: 30 s (${request.deadline})`);
  await new Promise((r) => setTimeout(r, 5000));
  t.equal(s.process.exitCode, null, 'still up while held');
  w.close();
  await removeFinalizer(holder, SHUTDOWN, 'db-flush');
  await exited(s);
  const took = Date.now() - t0;
  t.ok(took >= 5000 && took < 15_000, `ended once let go: ${took} ms`);
  t.match(s.log(), /reboot held by db-flush \(waiting up to 30 s\)/);
  t.match(s.log(), /reboot: every holder let go \(db-flush\)/);
});

t.test('a holder that never lets go: the grace period ends the wait, naming it', async (t) => {
  const s = await engine(t);
  const holder = s.client('admin');
  t.teardown(() => holder.close());
  await addFinalizer(holder, SHUTDOWN, 'stuck-forever');
  const t0 = Date.now();
  await power(s, 'grace-test', { graceSeconds: 3 });
  await exited(s);
  const took = Date.now() - t0;
  t.ok(took >= 3000 && took < 10_000, `ended after the grace period: ${took} ms`);
  t.match(s.log(), /WARN poweroff: grace period of 3 s over: going on without stuck-forever/);
});

t.test('--force does not wait; a reader may not hold', async (t) => {
  const s = await engine(t);
  const reader = s.client('reader');
  t.teardown(() => reader.close());
  await t.rejects(addFinalizer(reader, SHUTDOWN, 'reader-hold'), { code: 'permission-denied' });
  const admin = s.client();
  t.teardown(() => admin.close());
  await addFinalizer(admin, SHUTDOWN, 'ignored');
  const t0 = Date.now();
  await power(s, 'force-test', { force: true });
  await exited(s);
  t.ok(Date.now() - t0 < 3000, `at once: ${Date.now() - t0} ms`);
  t.match(s.log(), /power request "force-test": poweroff \(forced\)/);
});

t.test('cosictl shutdown --grace: the request carries it; flags that contradict are refused', async (t) => {
  const s = await engine(t);
  const admin = s.client();
  t.teardown(() => admin.close());
  await addFinalizer(admin, SHUTDOWN, 'cosictl-test');
  const run = (args: string[]) => runProgram(join(a.dir, 'cosictl'), ['--config', s.cosictlConfig, ...args]);
  const bad = await run(['shutdown', '--grace', '5s', '--force']);
  t.same([bad.code, /--grace and --force contradict/.test(bad.err)], [2, true], bad.err);
  const r = await run(['shutdown', '--grace', '2s', '--id', 'by-cosictl']);
  t.equal(r.code, 0, r.err);
  t.match(r.err, /shutdown: asked \(PowerRequest "by-cosictl"\); cosictl get machinestatus shows who holds it/);
  await exited(s);
  t.match(s.log(), /grace period of 2 s over: going on without cosictl-test/);
});
