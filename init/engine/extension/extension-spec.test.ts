// The extension controller on a real state and controller runtime, with a machine of directories: an image is
// a root directory copied where it is "mounted", a cgroup a directory with memory.events and memory.current, and
// the supervisor publishes PluginStatus as the real one does (this process's pid as the extension's, so its
// /proc/PID/status is read). What runs it in a booted machine (squashfs, loop devices, confinement): qemu/
// extension.test.ts. Here: the steps and their order, the finalizer, retries and refusals.
import t, { type Test } from 'tap';
import {
  chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControllerRuntime } from '../../../cosi/controller/runtime.ts';
import { newResource, type Pointer } from '../../../cosi/resource/resource.ts';
import { MemoryState } from '../../../cosi/state/memory-state.ts';
import { copyResource } from '../../../cosi/state/freeze.ts';
import { destroyIfPresent, upsert } from '../../../cosi/state/upsert.ts';
import { until } from '../../../cosi/conformance/converge.ts';
import { createAdmission } from '../../../machinery/config/admission.ts';
import type { Logger } from '../../../machinery/log.ts';
import type { ExtensionStatusSpec, PluginStatusSpec } from '../../../machinery/model/runtime-types.ts';
import {
  CONFIG_NS, EXTENSION_SECRET_TYPE, EXTENSION_STATUS_TYPE, EXTENSION_TYPE, HEALTH_STATUS_TYPE, PLUGIN_STATUS_TYPE,
  EXTENSION_OVERRIDE_TYPE, REGISTRY_CREDENTIAL_TYPE, RUNTIME_NS,
} from '../../../proto/gen/resource-types.ts';
import { ociImage, startTestRegistry } from '../../../machinery/oci/test-registry.ts';
import { HEALTH_ID } from '../../../machinery/model/singleton-ids.ts';
import { extensionSpec } from './extension-spec.ts';
import { EXTENSION_LAUNCH_ENV } from '../../../machinery/model/extension-launch.ts';
import { PURGE_VOLUMES_ANNOTATION } from '../../../machinery/model/extension-manifest.ts';
import { imagePath, RefusedImage } from './fetch.ts';
import { ExtensionTypeBook, type RealMachine } from './types.ts';

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => quiet };
const SHA = { one: '1'.repeat(64), two: '2'.repeat(64), bad: 'b'.repeat(64) };
const MANIFEST = (name: string, version: string, extra = '') =>
  `name: ${name}\nversion: ${version}\nexecutable: /bin/prog\noutputs: []\nmemory: 32MiB\n${extra}`;

/** `realFetch`: images fetched and pulled as the machine does (fetchExtensionImage's own), not from `roots`. */
async function setUp(t: Test, o: { uids?: string; volumes?: boolean; realFetch?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'extension-spec-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  if (o.uids) writeFileSync(join(dir, 'extension-uids.json'), o.uids);
  /** The image of each hash: a root directory. */
  const roots = new Map<string, string>();
  const root = (sha: string, manifest: string, executable = true, dirs: string[] = []) => {
    const r = join(dir, 'roots', sha);
    for (const d of ['proc', 'dev', 'tmp', 'run', 'bin', ...dirs]) mkdirSync(join(r, d), { recursive: true });
    writeFileSync(join(r, 'manifest.yaml'), manifest);
    if (executable) {
      writeFileSync(join(r, 'bin', 'prog'), '#!/bin/sh\n');
      chmodSync(join(r, 'bin', 'prog'), 0o755);
    }
    roots.set(sha, r);
  };
  const seen = { fetches: [] as string[], steps: [] as string[], away: 0, launches: [] as string[], noGroups: 0 };
  const machine: RealMachine = {
    imagesDir: join(dir, 'images'), mountsDir: join(dir, 'mounts'),
    ...(o.uids ? { uidsFile: join(dir, 'extension-uids.json') } : {}),
    ...(o.volumes ? { volumes: { dir: join(dir, 'volumes'), backing: () => ({ persistent: true }) } } : {}),
    secretsDir: join(dir, 'secrets'),
    async fetch(source, sha256, into) {
      seen.fetches.push(sha256);
      if (source.includes('away') && seen.away-- > 0) return new Error(`${source}: connect ECONNREFUSED`);
      if (!roots.has(sha256)) return new RefusedImage(`${source}: its sha256 is not the ${sha256} declared`);
      mkdirSync(into, { recursive: true });
      writeFileSync(imagePath(into, sha256), sha256);
      return { path: imagePath(into, sha256), bytes: 64, reused: false };
    },
    mount(image, at) {
      seen.steps.push(`mount ${image.slice(-20, -9)}`);
      // A pulled image is a tree already.
      const from = statSync(image).isDirectory() ? image
        : roots.get(readdirSync(machine.imagesDir).find((f) => image.endsWith(f))!.slice(0, 64))!;
      cpSync(from, at, { recursive: true });
    },
    unmount(at) {
      seen.steps.push('unmount');
      for (const f of readdirSync(at)) rmSync(join(at, f), { recursive: true });
    },
    prepareGroup(name) {
      if (seen.noGroups-- > 0) throw new Error(`mkdir /sys/fs/cgroup/extensions/${name}: no space left (ENOSPC)`);
      const g = join(dir, 'cgroup', name);
      mkdirSync(g, { recursive: true });
      writeFileSync(join(g, 'memory.events'), 'oom 0\noom_kill 0\n');
      writeFileSync(join(g, 'memory.current'), '1234\n');
      return g;
    },
    async removeGroup(g) {
      seen.steps.push('remove group');
      rmSync(g, { recursive: true });
    },
  };
  if (o.realFetch) delete machine.fetch;
  const state = new MemoryState();
  const pluginPtr = (id: string): Pointer => ({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id });
  const supervisor = {
    add(p: { name: string; outputs: readonly string[]; env?: Record<string, string> }) {
      seen.steps.push(`add ${p.name}`);
      seen.launches.push(p.env?.[EXTENSION_LAUNCH_ENV] ?? '');
      const running: PluginStatusSpec = { state: 'running', pid: process.pid, restarts: 0, outputs: [...p.outputs] };
      void upsert(state, pluginPtr(p.name), running, 'engine');
    },
    async remove(name: string) {
      seen.steps.push(`remove ${name}`);
      await destroyIfPresent(state, pluginPtr(name), 'engine');
    },
  };
  const runtime = new ControllerRuntime(state, {
    log: () => ({ info: () => {}, warn: () => {}, error: () => {} }),
    backoff: { initialMs: 20, factor: 1.5, maxMs: 500 },
  });
  runtime.register(extensionSpec({
    state, log: quiet, supervisor, admission: createAdmission(state),
    pluginSocket: '/run/cosi/plugins.sock', machine, types: new ExtensionTypeBook(machine), firstRetryMs: 200,
    builtins: [{ name: 'network', outputs: ['LinkStatuses.net.appliance.dev'] }],
  }));
  runtime.start();
  await runtime.watching();
  t.teardown(() => runtime.stop());
  const specPtr = (id: string) => ({ namespace: CONFIG_NS, type: EXTENSION_TYPE, id });
  const statusOf = async (id: string) =>
    state.findSync({ namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE, id })?.spec as ExtensionStatusSpec | undefined;
  const declare = async (id: string, source: string, sha256: string, more: Record<string, unknown> = {}) => {
    const cur = state.findSync(specPtr(id));
    if (!cur) return state.create(newResource(specPtr(id), { source, sha256, ...more }));
    const next = copyResource(cur);
    next.spec = { source, sha256, ...more };
    return state.update(next);
  };
  const phase = (id: string, want: string, ms = 5000) => until(async () => (await statusOf(id))?.phase, want, ms);
  return { dir, root, seen, machine, state, statusOf, declare, phase, specPtr, pluginPtr };
}

t.test('declared: fetched, mounted, its cgroup made, started; running with what /proc says', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  await m.declare('hello', 'http://images/hello', SHA.one);
  t.equal(await m.phase('hello', 'running'), 'running');
  const s = (await m.statusOf('hello'))!;
  t.match(s, { version: '1.0.0', uid: 61_000, memoryBytes: 1234, memoryMaxBytes: 32 << 20, imageBytes: 64 });
  t.ok(Array.isArray(s.capabilities) && s.startSeconds !== undefined, 'capabilities and start time read');
  t.same(m.seen.steps, [`mount ${SHA.one.slice(-11)}`, 'add hello']);
  t.same(m.state.findSync(m.specPtr('hello'))!.metadata.finalizers, ['engine'], 'the spec is held');
  t.ok(existsSync(join(m.machine.mountsDir, `hello-${SHA.one.slice(0, 12)}`, 'manifest.yaml')));
});

t.test('the uid an extension had at the last boot, whatever the order; a new one the lowest never given', async (t) => {
  const m = await setUp(t, { uids: '{"uids": {"web": 61000, "hello": 61001}}' });
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  m.root(SHA.two, MANIFEST('clock', '1.0.0'));
  await m.declare('hello', 'http://images/hello', SHA.one);
  t.equal(await m.phase('hello', 'running'), 'running');
  t.equal((await m.statusOf('hello'))!.uid, 61_001, 'hello declared first, still 61001');
  await m.declare('clock', 'http://images/clock', SHA.two);
  t.equal(await m.phase('clock', 'running'), 'running');
  t.equal((await m.statusOf('clock'))!.uid, 61_002, 'web keeps 61000 though it is not declared');
  t.same(JSON.parse(readFileSync(join(m.dir, 'extension-uids.json'), 'utf8')),
    { uids: { web: 61_000, hello: 61_001, clock: 61_002 } }, 'written down');
});

t.test('volumes: made before it starts, bound by its launcher, kept when it goes, purged when asked', async (t) => {
  const m = await setUp(t, { volumes: true });
  const withVolume = MANIFEST('web', '1.0.0', 'volumes: [{name: data, path: /srv/data}]\n');
  m.root(SHA.bad, withVolume);
  await m.declare('web', 'http://images/web', SHA.bad);
  t.equal(await m.phase('web', 'failed'), 'failed');
  t.match((await m.statusOf('web'))!.error, 'volumes: data: /srv/data: no directory in the image to mount it on');
  m.root(SHA.one, withVolume, true, ['srv/data']);
  await m.declare('web', 'http://images/web', SHA.one);
  t.equal(await m.phase('web', 'running'), 'running');
  const kept = join(m.dir, 'volumes', 'web', 'data');
  t.match((await m.statusOf('web'))!.volumes, [{ name: 'data', path: '/srv/data', dir: kept, persistent: true }]);
  t.match(JSON.parse(m.seen.launches.at(-1)!), { volumes: [{ source: kept, target: '/srv/data' }] },
    'its launcher is told what to bind where');
  t.equal(statSync(kept).uid, 61_000, 'owned by its uid');
  writeFileSync(join(kept, 'file'), 'kept');
  await m.state.teardownAndDestroy(m.specPtr('web'));
  t.equal(readFileSync(join(kept, 'file'), 'utf8'), 'kept', 'deleted: its volume is kept');
  await m.declare('web', 'http://images/web', SHA.one);
  t.equal(await m.phase('web', 'running'), 'running');
  t.equal(readFileSync(join(kept, 'file'), 'utf8'), 'kept', 'declared again: the same files');
  const cur = copyResource(m.state.findSync(m.specPtr('web'))!);
  cur.metadata.annotations = { [PURGE_VOLUMES_ANNOTATION]: 'true' };
  await m.state.update(cur);
  await m.state.teardownAndDestroy(m.specPtr('web'));
  t.notOk(existsSync(join(m.dir, 'volumes', 'web')), 'deleted with the purge annotation: its volumes are gone');

  const none = await setUp(t);
  none.root(SHA.one, MANIFEST('web', '1.0.0', 'volumes: [{name: data, path: /srv/data}]\n'), true, ['srv/data']);
  await none.declare('web', 'http://images/web', SHA.one);
  t.equal(await none.phase('web', 'failed'), 'failed');
  t.match((await none.statusOf('web'))!.error, 'volumes: this machine keeps no volumes');
});

t.test('after: mounted and checked, then waiting, saying for what, until the network and the other one are there',
  async (t) => {
    const m = await setUp(t);
    m.root(SHA.one, MANIFEST('web', '1.0.0', 'after: [network, db]\n'));
    m.root(SHA.two, MANIFEST('db', '1.0.0'));
    await m.declare('web', 'http://images/web', SHA.one);
    t.equal(await m.phase('web', 'waiting'), 'waiting');
    t.equal((await m.statusOf('web'))!.error, 'waiting for network (no health status yet), db (not declared)');
    t.same(m.seen.steps, [`mount ${SHA.one.slice(-11)}`], 'mounted and checked; not started');
    const health = { namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID };
    await upsert(m.state, health, { healthy: false, since: '',
      checks: [{ name: 'addresses', ok: false, message: 'eth0 has no DHCP lease (selecting)' }] }, 'engine');
    t.equal(await until(async () => (await m.statusOf('web'))!.error,
      'waiting for network (eth0 has no DHCP lease (selecting)), db (not declared)', 5000),
    'waiting for network (eth0 has no DHCP lease (selecting)), db (not declared)');
    await upsert(m.state, health, { healthy: true, since: '',
      checks: [{ name: 'addresses', ok: true, message: 'none configured' }] }, 'engine');
    t.equal(await until(async () => (await m.statusOf('web'))!.error,
      'waiting for network (none configured), db (not declared)', 5000),
    'waiting for network (none configured), db (not declared)', 'nothing configured on the network (yet): waited for');
    await upsert(m.state, health, { healthy: true, since: '',
      checks: [{ name: 'addresses', ok: true, message: 'on eth0' }] }, 'engine');
    t.equal(await until(async () => (await m.statusOf('web'))!.error, 'waiting for db (not declared)', 5000),
      'waiting for db (not declared)');
    await m.declare('db', 'http://images/db', SHA.two);
    t.equal(await m.phase('web', 'running'), 'running');
    t.same(m.seen.steps.filter((x) => x.startsWith('add')), ['add db', 'add web'], 'db first, then web');
    await m.state.teardownAndDestroy(m.specPtr('web'));
    t.notOk(await m.statusOf('web'), 'a waiting or running one goes when deleted');
  });

t.test('failed for the machine\'s sake: tried again on a backoff, saying so, its version and critical kept',
  async (t) => {
    const m = await setUp(t);
    m.root(SHA.one, MANIFEST('web', '1.0.0', 'critical: true\n'));
    m.seen.noGroups = 2;
    await m.declare('web', 'http://images/web', SHA.one);
    t.equal(await m.phase('web', 'failed'), 'failed');
    t.match(await m.statusOf('web'), { version: '1.0.0', critical: true,
      error: /mkdir \/sys\/fs\/cgroup\/extensions\/web: no space left \(ENOSPC\) \(trying again in 0 s\)/ });
    t.equal(await m.phase('web', 'running', 10_000), 'running', 'the third try starts it, the spec unchanged');

    m.root(SHA.two, MANIFEST('reader', '1.0.0', 'outputs: [Notes.example.com]\n').replace('outputs: []\n', ''));
    await m.declare('reader', 'http://images/reader', SHA.two);
    t.equal(await m.phase('reader', 'failed'), 'failed');
    t.match((await m.statusOf('reader'))!.error, /outputs: Notes\.example\.com is no type of this machine's \(yet\)/);
    await m.state.create(newResource({ namespace: 'meta', type: 'ResourceDefinitions.meta.cosi.dev',
      id: 'notes.example.com' }, { type: 'Notes.example.com', defaultNamespace: 'default' }));
    t.equal(await m.phase('reader', 'running', 10_000), 'running', 'once another defines the type it writes');

    m.root(SHA.bad, MANIFEST('broken', '1.0.0', 'capabilities: [CAP_SYS_ADMIN]\n'));
    await m.declare('broken', 'http://images/broken', SHA.bad);
    t.equal(await m.phase('broken', 'failed'), 'failed');
    const fetches = m.seen.fetches.length;
    await new Promise((r) => setTimeout(r, 600));
    t.equal(m.seen.fetches.length, fetches, 'what the image itself says is final: not fetched again');
    t.notMatch((await m.statusOf('broken'))!.error, /trying again/);
  });

t.test('its secret: variables in its environment, files its uid alone reads; a new secret restarts it', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('hello', '1.0.0', 'env: {MODE: plain, TOKEN: none}\n'));
  const secretPtr = { namespace: CONFIG_NS, type: EXTENSION_SECRET_TYPE, id: 'hello' };
  await upsert(m.state, secretPtr, { env: { TOKEN: 's3cr3t' }, files: { 'tls.key': 'KEY' } }, 'admin');
  await m.declare('hello', 'http://images/hello', SHA.one);
  t.equal(await m.phase('hello', 'running'), 'running');
  const files = join(m.dir, 'secrets', 'hello');
  t.match(JSON.parse(m.seen.launches.at(-1)!), { env: { MODE: 'plain', TOKEN: 's3cr3t' }, secrets: files },
    'the secret\'s variables after the manifest\'s; its files for the launcher to bind');
  const key = statSync(join(files, 'tls.key'));
  t.same([readFileSync(join(files, 'tls.key'), 'utf8'), key.uid, key.mode & 0o777], ['KEY', 61_000, 0o400]);
  t.same([statSync(files).uid, statSync(files).mode & 0o777], [61_000, 0o500]);
  t.notMatch(JSON.stringify(await m.statusOf('hello')), /s3cr3t|KEY/, 'nothing of it in the status');
  const steps = m.seen.steps.length;
  await upsert(m.state, secretPtr, { env: { TOKEN: 'rotated' } }, 'admin');
  t.equal(await until(async () => JSON.parse(m.seen.launches.at(-1)!).env.TOKEN as string, 'rotated', 5000),
    'rotated', 'a new secret: started again with it');
  t.same(m.seen.steps.slice(steps, steps + 2), ['remove hello', 'unmount']);
  t.notOk(existsSync(files), 'no files in the new secret: none left of the old');
  await upsert(m.state, secretPtr, { env: { COSI_PLUGIN_SOCKET: '/tmp/x', 'NOT-A-NAME': 'x' } }, 'admin');
  t.equal(await m.phase('hello', 'failed'), 'failed');
  t.equal((await m.statusOf('hello'))!.error, 'secret env.COSI_PLUGIN_SOCKET: COSI_ and APPLIANCE_ variables are '
    + 'the engine\'s\nsecret env.NOT-A-NAME: not a variable name', 'each bad key named, never a value');
  await upsert(m.state, secretPtr, { files: { token: 'fixed' } }, 'admin');
  t.equal(await m.phase('hello', 'running'), 'running', 'the secret mended: started, the spec unchanged');
  t.equal(readFileSync(join(files, 'token'), 'utf8'), 'fixed');
  await m.state.teardownAndDestroy(m.specPtr('hello'));
  t.notOk(existsSync(files), 'stopped: its files gone');
});

t.test('a device its ExtensionSpec does not grant: it does not start, saying who grants it', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('modem', '1.0.0', 'devices: [/dev/ttyS7]\n'));
  await m.declare('modem', 'http://images/modem', SHA.one);
  t.equal(await m.phase('modem', 'failed'), 'failed');
  t.equal((await m.statusOf('modem'))!.error,
    'devices: /dev/ttyS7: not granted (an admin lists it in the ExtensionSpec\'s devices)');
  t.same(m.seen.steps.filter((s) => s.startsWith('add')), [], 'not started');
});

t.test('its process killed for its memory: crashing, and its cgroup\'s OOM kill named', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  await m.declare('hello', 'http://images/hello', SHA.one);
  await m.phase('hello', 'running');
  writeFileSync(join(m.dir, 'cgroup', 'hello', 'memory.events'), 'oom 1\noom_kill 1\n');
  await upsert(m.state, m.pluginPtr('hello'), {
    state: 'backoff', pid: 0, restarts: 1, outputs: [], lastExit: { code: 0, signal: 'SIGKILL' },
  }, 'engine');
  t.equal(await m.phase('hello', 'crashing'), 'crashing');
  t.match((await m.statusOf('hello'))!.error, /killed by the OOM killer: .*memory\.max 32 MiB/);
});

t.test('a new image replaces it: the old process stops before the new one starts, its image goes', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  m.root(SHA.two, MANIFEST('hello', '1.1.0'));
  await m.declare('hello', 'http://images/hello', SHA.one);
  await m.phase('hello', 'running');
  await m.declare('hello', 'http://images/hello-1.1', SHA.two);
  t.equal(await until(async () => (await m.statusOf('hello'))?.version, '1.1.0'), '1.1.0');
  t.equal(await m.phase('hello', 'running'), 'running');
  t.same(m.seen.steps, [`mount ${SHA.one.slice(-11)}`, 'add hello', 'remove hello', 'unmount', 'remove group',
    `mount ${SHA.two.slice(-11)}`, 'add hello']);
  t.notOk(existsSync(imagePath(m.machine.imagesDir, SHA.one)), 'the old image is not kept');
  t.ok(existsSync(imagePath(m.machine.imagesDir, SHA.two)));
});

t.test('deleted: the delete returns once it is stopped, unmounted and its cgroup gone', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  await m.declare('hello', 'http://images/hello', SHA.one);
  await m.phase('hello', 'running');
  await m.state.teardownAndDestroy(m.specPtr('hello'));
  t.same(m.seen.steps.slice(2), ['remove hello', 'unmount', 'remove group'], 'undone before the delete returned');
  t.equal(await until(() => m.statusOf('hello'), undefined), undefined, 'its status goes');
  t.same(readdirSync(m.machine.mountsDir), []);
  t.notOk(existsSync(imagePath(m.machine.imagesDir, SHA.one)));
});

t.test('a bad image: every problem named, and not fetched again until its spec changes', async (t) => {
  const m = await setUp(t);
  m.root(SHA.bad, MANIFEST('other', '1.0.0', 'outputs: [LinkStatuses.net.appliance.dev]\n')
    .replace('outputs: []\n', ''), false);
  await m.declare('broken', 'http://images/broken', SHA.bad);
  t.equal(await m.phase('broken', 'failed'), 'failed');
  const error = (await m.statusOf('broken'))!.error;
  t.match(error, /names the extension "other", its ExtensionSpec "broken"/);
  t.match(error, /executable \/bin\/prog: no executable file in the image/);
  t.match(error, /LinkStatuses\.net\.appliance\.dev is written by the machine's plugin network/);
  t.same(readdirSync(m.machine.mountsDir), [], 'unmounted again');
  // Other extensions' processes come and go: the refused one is not fetched again for that.
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  await m.declare('hello', 'http://images/hello', SHA.one);
  await m.phase('hello', 'running');
  t.same(m.seen.fetches, [SHA.bad, SHA.one]);
  await m.declare('broken', 'http://images/not-found', SHA.two);
  // The new spec's first status is the progress report (fetching, its sha256): its outcome comes after.
  await until(async () => {
    const s = await m.statusOf('broken');
    return s?.sha256 === SHA.two && s.phase === 'failed';
  }, true);
  t.match((await m.statusOf('broken'))!.error, /its sha256 is not the 2+ declared/);
  t.same(m.seen.fetches, [SHA.bad, SHA.one, SHA.two], 'a new spec is tried');
});

t.test('a server away: failed and trying again, then running once it answers', async (t) => {
  const m = await setUp(t);
  m.root(SHA.one, MANIFEST('hello', '1.0.0'));
  m.seen.away = 2;
  await m.declare('hello', 'http://away/hello', SHA.one);
  const waiting = (e?: string) => /ECONNREFUSED \(trying again in \d+ s\)/.test(e ?? '');
  t.ok(await until(async () => waiting((await m.statusOf('hello'))?.error), true), 'failed, trying again');
  t.equal(await m.phase('hello', 'running', 10_000), 'running');
  t.same(m.seen.fetches, [SHA.one, SHA.one, SHA.one], 'tried three times: 200 ms, then 400 ms later');
});

t.test('oci://: pulled; a replacement that cannot be pulled leaves the version running; credentials given later count',
  async (t) => {
    const registry = await startTestRegistry();
    t.teardown(() => registry.close());
    const version = (v: string) => ociImage({ 'bin/prog': '#!/bin/sh\n' }, { Entrypoint: ['/bin/prog'],
      Labels: { 'dev.appliance.manifest': 'outputs: []\n', 'org.opencontainers.image.version': v } });
    const [v1, v2] = [await version('1.0.0'), await version('2.0.0')];
    registry.add(v1);
    registry.add(v2);
    const hex = (i: { digest: string }) => i.digest.slice('sha256:'.length);
    const source = (repo: string, i: { digest: string }) => `oci://${registry.host}/${repo}@${i.digest}`;
    const m = await setUp(t, { realFetch: true });
    await m.declare('web', source('apps/web', v1), hex(v1), { insecure: true });
    t.equal(await m.phase('web', 'running'), 'running');
    t.match(await m.statusOf('web'), { version: '1.0.0', sha256: hex(v1) });
    const errorIs = (re: RegExp) => until(async () => re.test((await m.statusOf('web'))?.error ?? ''), true, 5000);

    await m.declare('web', source('wrong', v2), hex(v2), { insecure: true });
    t.ok(await errorIs(/^not replaced: fetching: .*its bytes are sha256:/), 'why it was not replaced');
    t.match(await m.statusOf('web'), { phase: 'running', version: '1.0.0', sha256: hex(v1) }, 'v1 runs on');
    t.notOk(m.seen.steps.includes('remove web'), 'never stopped');

    await m.declare('web', source('private/web', v2), hex(v2), { insecure: true });
    t.ok(await errorIs(/not authorized anonymously/), 'a private repository, no credentials: refused');
    t.match(await m.statusOf('web'), { phase: 'running', version: '1.0.0' });
    await m.state.create(newResource({ namespace: CONFIG_NS, type: REGISTRY_CREDENTIAL_TYPE, id: registry.host },
      { username: 'ci', password: 'pw' }));
    t.equal(await until(async () => (await m.statusOf('web'))?.version, '2.0.0', 5000), '2.0.0',
      'its credentials declared: pulled and replaced');
    t.equal(await m.phase('web', 'running'), 'running');
    t.ok(existsSync(join(m.machine.imagesDir, `${hex(v2)}.oci`)), 'kept as a tree');
    t.notOk(existsSync(join(m.machine.imagesDir, `${hex(v1)}.oci`)), 'the replaced version\'s tree is gone');
  });

t.test('a pushed build runs instead of the declared image, said in its status; deleting its override goes back',
  async (t) => {
    const m = await setUp(t);
    m.root(SHA.one, MANIFEST('web', '1.0.0'));
    m.root(SHA.two, MANIFEST('web', '1.1.0-dev'));
    await m.declare('web', 'http://images/web', SHA.one);
    t.equal(await m.phase('web', 'running'), 'running');
    const override = { namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE, id: 'web' };
    await m.state.create(newResource(override, { sha256: SHA.two, bytes: 64, pushedAt: '2026-11-28T12:00:00.000Z',
      persist: false, signedBy: '' }));
    t.equal(await until(async () => (await m.statusOf('web'))?.version, '1.1.0-dev', 5000), '1.1.0-dev');
    t.match(await m.statusOf('web'), { phase: /starting|running/, sha256: SHA.two,
      override: `pushed 2026-11-28T12:00:00.000Z, until the next boot; declared ${SHA.one.slice(0, 12)}` });
    t.equal(m.seen.fetches.at(-1), SHA.two, 'the pushed image, found where it was kept');
    await m.state.teardownAndDestroy(override);
    t.equal(await until(async () => (await m.statusOf('web'))?.version, '1.0.0', 5000), '1.0.0', 'the declared again');
    t.equal((await m.statusOf('web'))?.override, '');
  });
