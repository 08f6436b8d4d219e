// The trial at a machine's start, on a real boot partition in a temporary directory: an upgrade the machine stopped
// in while writing its slot is reported failed, saying so.
import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { createLogger } from '../../machinery/log.ts';
import { GRUBENV_PATH } from '../../machinery/disk/boot-slots.ts';
import { encodeGrubEnv } from '../../machinery/disk/grubenv.ts';
import { BootPartition } from './boot-partition.ts';
import { startTrial } from './trial.ts';
import {
  EXTENSION_STATUS_TYPE, HEALTH_STATUS_TYPE, RUNTIME_NS, UPGRADE_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { until } from '../../cosi/conformance/converge.ts';
import { HEALTH_ID } from '../../machinery/model/singleton-ids.ts';

t.test('an upgrade stopped while writing its slot: failed, saying the loader never tried it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trial-'));
  mkdirSync(join(dir, 'boot', 'grub'), { recursive: true });
  writeFileSync(join(dir, GRUBENV_PATH), encodeGrubEnv({ default_slot: 'A', good_slots: 'A' }));
  const boot = new BootPartition(dir, 'A');
  boot.setRecord({
    id: 'cut', healthTimeoutSeconds: 120,
    status: {
      phase: 'writing', source: 'upload', fromVersion: '1.0.0', version: '1.1.0', slot: 'B', bytesReceived: 10,
      bytesWritten: 5, error: '', startedAt: '2026-11-26T00:00:00Z', keyId: 'k',
    },
  });
  const state = new MemoryState();
  const trial = await startTrial({
    state, log: createLogger('test'), owner: 'engine', boot, reboot: () => t.fail('no reboot'),
    slotsChanged: async () => {},
  });
  trial.close();
  const status = state.findSync({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id: 'cut' });
  t.match(status?.spec, {
    phase: 'failed', error: /^the machine stopped while slot B was being written \(version 1\.1\.0; a power cut\?\): /,
  });
  t.match(boot.record(), { status: { phase: 'failed' } }, 'the record says so too');
});

/** A boot partition whose slot B is being tried and runs, with its upgrade's record. */
function tried(t: Test, healthTimeoutSeconds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'trial-'));
  mkdirSync(join(dir, 'boot', 'grub'), { recursive: true });
  writeFileSync(join(dir, GRUBENV_PATH), encodeGrubEnv({
    default_slot: 'A', good_slots: 'A', try_slot: 'B', tries_left: '0',
  }));
  const boot = new BootPartition(dir, 'B');
  boot.setRecord({
    id: 'up', healthTimeoutSeconds,
    status: {
      phase: 'staged', source: 'upload', fromVersion: '1.0.0', version: '1.1.0', slot: 'B', bytesReceived: 10,
      bytesWritten: 10, error: '', startedAt: '2026-11-26T00:00:00Z', keyId: 'k',
    },
  });
  const state = new MemoryState();
  const runtime = new ControllerRuntime(state, { log: () => ({ info() {}, warn() {}, error() {} }) });
  t.teardown(() => runtime.stop());
  const health = (ok: boolean) => ({ healthy: ok, since: '', checks: [{ name: 'plugins', ok, message: '' }] });
  return { boot, state, runtime, health };
}

t.test('a tried slot healthy long enough is marked good, through the engine\'s runtime', async (t) => {
  const { boot, state, runtime, health } = tried(t, 60);
  const trial = await startTrial({
    state, log: createLogger('test'), owner: 'engine', boot, reboot: () => t.fail('no reboot'),
    slotsChanged: async () => {}, stableMs: 300,
  });
  t.teardown(() => trial.close());
  t.ok(trial.controller, 'this boot is the try: a controller follows it');
  runtime.register(trial.controller!);
  runtime.start();
  await runtime.watching();
  const ptr = { namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID };
  await state.create(newResource(ptr, health(false)), { owner: 'engine' });
  await new Promise((r) => setTimeout(r, 400));
  t.match(boot.record(), { status: { phase: 'trying' } }, 'not healthy: still trying');
  await state.update({ ...(await state.get(ptr)), spec: health(true) }, { owner: 'engine' });
  await until(() => boot.record()?.status.phase, 'done', 5000);
  t.same(boot.loader().good, new Set(['A', 'B']), 'B is good');
  t.match(state.findSync({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id: 'up' })?.spec, { phase: 'done' });
});

t.test('a tried slot not healthy in time: the failing checks noted, and a reboot', async (t) => {
  const { boot, state, runtime, health } = tried(t, 1);
  let rebooted = '';
  const trial = await startTrial({
    state, log: createLogger('test'), owner: 'engine', boot, reboot: (why) => { rebooted = why; },
    slotsChanged: async () => {}, stableMs: 300,
  });
  t.teardown(() => trial.close());
  runtime.register(trial.controller!);
  runtime.start();
  await runtime.watching();
  await state.create(newResource({ namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID },
    { ...health(false), checks: [{ name: 'plugins', ok: false, message: 'network is backoff' }] }),
  { owner: 'engine' });
  t.equal(await until(() => rebooted, 'upgrade "up": slot B not healthy in time', 5000),
    'upgrade "up": slot B not healthy in time');
  t.match(boot.record(), { trialProblem: 'after 1 s: plugins: network is backoff' });
});

t.test('a critical extension restarted 3 times fails the try at once, though the health holds for now', async (t) => {
  const { boot, state, runtime, health } = tried(t, 600);
  let rebooted = '';
  const trial = await startTrial({
    state, log: createLogger('test'), owner: 'engine', boot, reboot: (why) => { rebooted = why; },
    slotsChanged: async () => {}, stableMs: 60_000,
  });
  t.teardown(() => trial.close());
  runtime.register(trial.controller!);
  runtime.start();
  await runtime.watching();
  await state.create(newResource({ namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID }, health(true)),
    { owner: 'engine' });
  const ext = (id: string, critical: boolean, restarts: number) => state.create(newResource(
    { namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE, id },
    { phase: 'crashing', critical, restarts, error: 'exited (code 1)' }), { owner: 'engine' });
  await ext('helper', false, 7);
  await ext('web', true, 2);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(rebooted, '', 'a critical one at 2 restarts, a plain one at 7: still trying');
  await state.update({ ...(await state.get({ namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE, id: 'web' })),
    spec: { phase: 'crashing', critical: true, restarts: 3, error: 'exited (code 1)' } }, { owner: 'engine' });
  t.equal(await until(() => rebooted, 'upgrade "up": slot B failed its try', 5000),
    'upgrade "up": slot B failed its try');
  t.match(boot.record(), {
    trialProblem: 'its critical extension(s) restarted 3 times or more: web (3 restarts, last: exited (code 1))',
  });
});
