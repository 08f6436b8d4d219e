// The update poller on the engine's controller runtime, in this process: no poll while the clock is not to be
// trusted (TimeStatus says why), then a poll as soon as TimeStatus says it is; a policy whose root is not a root is
// said in UpdateStatus, nothing polled. The repository is a closed port: a poll shows as "could not be reached".
import t from 'tap';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { generateKeyFile, loadKeyFolders } from '../../image/release/tuf-keys.ts';
import { createRepository, ROLES, rootFile } from '../../image/release/tuf-repository.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newResource } from '../../cosi/resource/resource.ts';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import { createLogger } from '../../machinery/log.ts';
import type { UpdateStatusSpec } from '../../proto/gen/spec-types.ts';
import { CONFIG_NS, RUNTIME_NS, TIME_NS, TIME_STATUS_TYPE, UPDATE_POLICY_TYPE, UPDATE_STATUS_TYPE } from
  '../../proto/gen/resource-types.ts';
import { updatePoller } from './update-poller.ts';

const state = new MemoryState();
const runtime = new ControllerRuntime(state, { log: (name) => createLogger(name) });
runtime.register(updatePoller({
  owner: 'engine', log: createLogger('test'), dir: mkdtempSync(join(tmpdir(), 'update-clock-')),
  upgrader: {
    runningVersion: () => '1.0.0',
    upgradeFrom: () => Promise.reject(new Error('nothing is offered: no upgrade starts')),
  },
}));
runtime.start();
t.teardown(() => runtime.stop());
await runtime.watching();

// A real repository's root: the poll gets as far as fetching the next root, from a port nothing listens on.
const repo = join(mkdtempSync(join(tmpdir(), 'update-clock-repo-')), 'repo');
const keysDir = join(repo, '..', 'keys');
createRepository(repo, { roles: Object.fromEntries(ROLES.map((r) =>
  [r, { keys: [createPublicKey(generateKeyFile(keysDir, r).privateKey)], threshold: 1 }])) as never },
loadKeyFolders([keysDir]), new Date());
const root = readFileSync(rootFile(repo, 1), 'utf8');
const status = () => state.findSync({ namespace: RUNTIME_NS, type: UPDATE_STATUS_TYPE, id: 'fleet' })?.spec as
  UpdateStatusSpec | undefined;
const until = async (ok: (s: UpdateStatusSpec) => boolean) => {
  for (let i = 0; i < 250; i++) {
    const s = status();
    if (s && ok(s)) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no such UpdateStatus; the last: ${JSON.stringify(status())}`);
};
const clock = (clockProblem?: string) => ({ synced: false, servers: [], ...(clockProblem ? { clockProblem } : {}) });

t.test('no poll while the clock is not to be trusted', async (t) => {
  await state.create(newResource({ namespace: TIME_NS, type: TIME_STATUS_TYPE, id: 'clock' },
    clock('the clock reads 1970-01-01T00:00:00Z, before this build was made (2026-11-29)')));
  await state.create(newResource({ namespace: CONFIG_NS, type: UPDATE_POLICY_TYPE, id: 'fleet' },
    { urls: ['http://127.0.0.1:1/'], channel: '', root, pollIntervalSeconds: 3600, window: '',
      healthTimeoutSeconds: 0 }));
  const s = await until((x) => x.state === 'waiting');
  t.equal(s.reason, 'the clock is not to be trusted yet: the clock reads 1970-01-01T00:00:00Z, before this build '
    + 'was made (2026-11-29)');
  t.equal(s.lastCheck, undefined, 'not polled');
  t.equal(s.channel, 'stable', 'the default channel');
  const r = await state.get({ namespace: TIME_NS, type: TIME_STATUS_TYPE, id: 'clock' });
  await state.update({ ...r, spec: clock() });
  const polled = await until((x) => x.state === 'error');
  t.match(polled.error,
    /^the repository could not be reached: http:\/\/127\.0\.0\.1:1\/metadata\/2\.root\.json: ECONNREFUSED$/);
  t.ok(polled.lastCheck, 'polled once the clock was trusted');
  t.ok(Date.parse(polled.nextCheck!) - Date.now() < 10_000, 'out of reach: asked again in seconds, not an hour');
});

t.test('a policy whose root is not a root: said, nothing polled', async (t) => {
  const r = await state.get({ namespace: CONFIG_NS, type: UPDATE_POLICY_TYPE, id: 'fleet' });
  await state.update({ ...r, spec: { ...(r.spec as object), root: '{"signed": {"_type": "targets"}}' } });
  const s = await until((x) => /not a TUF root/.test(x.error));
  t.equal(s.state, 'error');
  await state.destroy({ namespace: CONFIG_NS, type: UPDATE_POLICY_TYPE, id: 'fleet' });
  for (let i = 0; i < 100 && status(); i++) await new Promise((res) => setTimeout(res, 20));
  t.equal(status(), undefined, 'no policy, no status');
});
