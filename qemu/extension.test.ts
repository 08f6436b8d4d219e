// Extensions in a booted machine: the example Python (grpcio) plugin of plugins/examples/hello-python,
// its root built by the test from this host's Debian packages and squashfs'd, served by a real HTTP
// server on loopback that the guest reaches through slirp's guestfwd. Declared with an ExtensionSpec:
// a wrong hash and a bad manifest are refused and say why; one that dies as it starts says its last
// words; the good one registers its types, runs confined (its capabilities, no_new_privs, seccomp and
// cgroup read back from /proc, by the engine and by the plugin itself), greets, is refused a write
// outside its outputs; a new image replaces it without a reboot; deleting it stops it. lighttpd's OCI image is pulled
// from a real registry by digest (oci://) and runs.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_RE } from '../init/boot/ready-line.ts';
import { distributionMissing, startDistributionRegistry } from '../scripts/lib/distribution-registry.ts';
import { lighttpdOciLayout } from '../scripts/lib/lighttpd-oci.ts';
import { bootWithApi, TEST_CA_DOCUMENT, type ApiVm } from './api-vm.ts';
import {
  buildHelloImages, HELLO_MANIFEST, IMAGE_HOST, imageUrl, serveImages, squashfs,
} from './extension-image.ts';

const dir = mkdtempSync(join(tmpdir(), 'extension-vm-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const images = join(dir, 'images');
const built = buildHelloImages(images, {
  hello: HELLO_MANIFEST(),
  // With a volume: this machine has no EPHEMERAL, so its status says it does not persist; purged as it is deleted.
  'hello-1.1': `${HELLO_MANIFEST().replace('version: 1.0.0', 'version: 1.1.0')}`
    + 'volumes: [{name: state, path: /var/lib/hello}]\n',
  'hello-crash': HELLO_MANIFEST().replace('version: 1.0.0', 'version: 0.9.0').replace(/^args: .*$/m,
    'args: [-c, "raise SystemExit(\'hello: cannot start: no greeting configured\')"]'),
  // Python asking for more than its cgroup allows: the kernel's OOM killer ends it, and its status says so.
  hog: HELLO_MANIFEST().replace('name: hello', 'name: hog').replace(/^args: .*$/m,
    'args: [-c, "x = b\'x\' * (256 << 20)"]').replace(/^types:[^]*?^outputs: .*$/m, 'outputs: []')
    .replace('memory: 96MiB', 'memory: 32MiB'),
  // The same program under another name and types of its own: declared with resources of those types.
  welcome: `name: welcome
version: 1.0.0
executable: /usr/bin/python3
args: [-u, /opt/hello/hello.py]
env:
  HELLO_NAMESPACE: welcome
  HELLO_INPUT_TYPE: Welcomes.welcome.example.org
  HELLO_STATUS_TYPE: WelcomeStatuses.welcome.example.org
types:
  - type: Welcomes.welcome.example.org
    defaultNamespace: welcome
    schema: {type: object, required: [name], properties: {name: {type: string}}}
  - type: WelcomeStatuses.welcome.example.org
    defaultNamespace: welcome
    access: controllers
outputs: [WelcomeStatuses.welcome.example.org]
`,
});
// An image whose manifest is wrong in several ways at once, every one of them said.
const brokenRoot = join(dir, 'broken-root');
mkdirSync(join(brokenRoot, 'proc'), { recursive: true });
writeFileSync(join(brokenRoot, 'manifest.yaml'), 'name: broken\nversion: 1.0.0\nexecutable: /bin/missing\n'
  + 'outputs: [Nothings.example.org]\ncapabilities: [CAP_EVERYTHING]\n');
const broken = squashfs(brokenRoot, join(images, 'broken.squashfs'), 1);

const server = await serveImages(images);
t.teardown(() => server.close());
const url = imageUrl;
// A real registry (Debian's docker-registry) over HTTPS with a CA of the test's own, reached by the guest at
// REGISTRY_HOST through guestfwd; lighttpd's OCI image pushed to it by skopeo.
const REGISTRY_HOST = { guestAddr: '10.0.2.101', guestPort: 443 } as const;
const registryMissing = distributionMissing();
const registry = registryMissing ? undefined : await startDistributionRegistry(mkdtempSync(join(dir, 'registry-')),
  [REGISTRY_HOST.guestAddr]);
t.teardown(() => registry?.close());

const m = await bootWithApi({ memoryMiB: 384, guestfwd: [{ ...IMAGE_HOST, hostPort: server.port },
  ...(registry ? [{ ...REGISTRY_HOST, hostPort: registry.port }] : [])] });
t.teardown(() => m.vm.kill());
const declare = (name: string, source: string, sha256: string) =>
  m.run(['apply', '-f', '-'],
    `metadata: {type: extensions, id: ${name}}\nspec: {source: "${source}", sha256: ${sha256}}\n`);
interface Status { phase: string; error?: string; version?: string; capabilities?: string[]; cgroup?: string;
  memoryMaxBytes?: number; cpuPercent?: number; startSeconds?: number; memoryBytes?: number; types?: string[];
  outputs?: string[]; sha256?: string; uid?: number; volumes?: Record<string, unknown>[] }
const statusOf = async (name: string): Promise<Status | undefined> => {
  const r = await m.run(['get', 'extensionstatus', name, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.out) as { spec: Status }).spec : undefined;
};
/** Failed, and not about to try again: a fetch the host's server reset (a loaded host) is said in the status and
 * retried, so the verdict on the image comes later. */
const failedForGood = (s: Status) => s.phase === 'failed' && !/trying again/.test(s.error ?? '');
async function until(name: string, ok: (s: Status) => boolean, ms = 120_000): Promise<Status | undefined> {
  const deadline = Date.now() + ms;
  let s = await statusOf(name);
  while (!(s && ok(s)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    s = await statusOf(name);
  }
  return s;
}
const pluginPid = async (name: string) => {
  const r = await m.run(['get', 'plugins', name, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.out) as { spec: { pid: number; state: string } }).spec : undefined;
};

t.test('an image whose hash is not the declared one is refused before anything of it runs', async (t) => {
  t.equal((await declare('hello', url('hello'), 'a'.repeat(64))).code, 0);
  const s = await until('hello', failedForGood);
  t.equal(s?.phase, 'failed');
  t.match(s?.error, `its sha256 is ${built.hello!.sha256}, not the ${'a'.repeat(64)} declared`);
  t.equal(await pluginPid('hello'), undefined, 'no plugin started');
});

t.test('a bad manifest: every problem named, nothing started', async (t) => {
  t.equal((await declare('broken', url('broken'), broken.sha256)).code, 0);
  const s = await until('broken', failedForGood);
  t.equal(s?.phase, 'failed');
  t.match(s?.error, /capabilities: "CAP_EVERYTHING" is not one the engine grants/);
  t.match(s?.error, /the image has no directory \/dev to mount on/);
  t.match(s?.error, /the image has no directory \/run to mount on/);
  t.equal(await pluginPid('broken'), undefined);
  t.equal((await m.run(['delete', 'extensions', 'broken'])).code, 0);
  t.equal(await until('broken', () => false, 10_000), undefined, 'its status goes with it');
});

t.test('one that dies as it starts says its last words, and restarts with backoff', async (t) => {
  t.equal((await declare('hello', url('hello-crash'), built['hello-crash']!.sha256)).code, 0);
  const s = await until('hello', (x) => x.phase === 'crashing');
  t.equal(s?.phase, 'crashing');
  t.equal(s?.version, '0.9.0');
  t.match(s?.error, 'hello: cannot start: no greeting configured');
  const p = await pluginPid('hello');
  t.match(p?.state, /backoff|starting/);
});

t.test('one using more memory than its cgroup allows is killed, and says so; the machine is unharmed', async (t) => {
  t.equal((await declare('hog', url('hog'), built.hog!.sha256)).code, 0);
  const s = await until('hog', (x) => x.phase === 'crashing');
  t.equal(s?.phase, 'crashing');
  t.equal(s?.error, 'killed by the OOM killer: it used all of its memory (memory.max 32 MiB)');
  t.equal((await m.run(['delete', 'extensions', 'hog'])).code, 0);
  t.equal(await until('hog', () => false, 20_000), undefined, 'stopped');
  // The crash-looping hello of the test before still fails: an extension is not the machine's health.
  t.match((await m.run(['get', 'plugins', 'hello'])).out, /backoff|starting/);
  const health = await m.run(['health']);
  t.equal(health.code, 0, `the machine stays healthy after all these failures: ${health.out}${health.err}`);
});

let firstPid = 0;
t.test('the good image replaces it: its types, its greeting, its confinement read back from /proc', async (t) => {
  t.equal((await declare('hello', url('hello'), built.hello!.sha256)).code, 0);
  const s = await until('hello', (x) => x.phase === 'running' && x.version === '1.0.0');
  t.equal(s?.phase, 'running', JSON.stringify(s));
  t.same(s?.capabilities, ['CAP_NET_BIND_SERVICE'], 'the engine reads CapEff: the declared capability only');
  t.equal(s?.cgroup, '/sys/fs/cgroup/extensions/hello');
  t.equal(s?.memoryMaxBytes, 96 * 2 ** 20);
  t.equal(s?.cpuPercent, 50);
  t.equal(s?.uid, 61000, 'a uid of its own');
  t.same(s?.outputs, ['GreetingStatuses.hello.example.org']);
  firstPid = (await pluginPid('hello'))?.pid ?? 0;
  t.ok(firstPid > 0);
  process.stderr.write(`[extension] hello: declared -> running ${s?.startSeconds?.toFixed(2)} s, `
    + `memory ${((s?.memoryBytes ?? 0) / 2 ** 20).toFixed(1)} MiB, `
    + `image ${(built.hello!.bytes / 2 ** 20).toFixed(1)} MiB\n`);
  // Its types are the machine's now: a user declares a Greeting, the plugin answers.
  t.match((await m.run(['api-resources'])).out, /Greetings\.hello\.example\.org/);
  t.equal((await m.run(['apply', '-f', '-'], 'metadata: {type: greetings, id: world}\nspec: {name: world}\n')).code, 0);
  const g = await m.poll(['get', 'greetingstatus', 'world', '-o', 'json'], /hello, world/, 60_000);
  const greeting = (JSON.parse(g.out) as { spec: Record<string, string> }).spec;
  t.equal(greeting.message, 'hello, world');
  t.equal(greeting.pid, String(firstPid), 'written by the process the engine runs');
  t.equal(greeting.uid, '61000', 'not root');
  t.equal(greeting.capEff, '0000000000000400', 'CAP_NET_BIND_SERVICE (10) alone, as the plugin reads it');
  t.equal(greeting.capBnd, '0000000000000400', 'nothing more to gain: the bounding set is the same');
  t.equal(greeting.noNewPrivs, '1');
  t.equal(greeting.seccomp, '2', 'a seccomp filter');
  t.equal(greeting.cgroup, '0::/extensions/hello');
  t.equal(greeting.mount, 'Operation not permitted');
  t.match(greeting.rootOptions, /^ro,nosuid,nodev\b/, 'its root: read-only, no setuid, no devices');
  t.same(greeting.root!.split(' '), ['bin', 'dev', 'etc', 'lib', 'lib64', 'manifest.yaml', 'opt', 'proc', 'run',
    'sbin', 'tmp', 'usr', 'var'], 'its root is its image: nothing of the machine');
  // A schema of its manifest, enforced for users as for any type.
  t.equal((await m.run(['apply', '-f', '-'], 'metadata: {type: greetings, id: bad}\nspec: {nom: x}\n')).code, 3);
  // The plugin tried to write a Greeting (not among its outputs) as it started, and logged the answer.
  const logs = await m.run(['logs', 'hello']);
  t.match(logs.out,
    /refused as it should be: PERMISSION_DENIED: plugin hello may not write Greetings\.hello\.example\.org/);
  t.notMatch(logs.out, /was accepted/);
});

t.test('a new image replaces the running one without a reboot; deleting it stops it', async (t) => {
  t.equal((await declare('hello', url('hello-1.1'), built['hello-1.1']!.sha256)).code, 0);
  const s = await until('hello', (x) => x.phase === 'running' && x.version === '1.1.0');
  t.equal(s?.version, '1.1.0');
  const pid = (await pluginPid('hello'))?.pid ?? 0;
  t.ok(pid > 0 && pid !== firstPid, `a new process (${firstPid} -> ${pid})`);
  t.equal(m.vm.console().match(new RegExp(READY_RE.source, 'g'))?.length, 1, 'one boot');
  t.match((await m.run(['logs', 'engine'])).out, /extension hello: stopped \(1\.0\.0/);
  // Its greeting's status is kept and written again by the new process.
  const again = await m.poll(['get', 'greetingstatus', 'world', '-o', 'json'], new RegExp(`"pid": "${pid}"`));
  t.match(again.out, new RegExp(`"pid": "${pid}"`), 'the new process greeted the Greeting again');
  t.match(s?.volumes, [{ name: 'state', path: '/var/lib/hello', dir: '/var/lib/extensions/hello/state',
    persistent: false, note: /^not persistent: \/var\/lib\/extensions is in memory/ }],
  'its volume, said not to persist on a machine whose /var is in memory');
  const purged = await m.run(['delete', 'extensionspec', 'hello', '--purge-volumes']);
  t.equal(purged.code, 0, purged.err);
  t.match(purged.out, /extension\/hello deleted, its volumes purged/);
  t.match((await m.run(['logs', 'engine'])).out, /extension hello: volumes purged: state/, 'its volume removed');
  t.equal(await until('hello', () => false, 20_000), undefined, 'its status is gone');
  t.equal(await pluginPid('hello'), undefined, 'its process is gone');
  t.match((await m.run(['get', 'greetings', 'world'])).out, /world/, 'what users declared of its types stays');
});

const extensionDoc = (name: string, image: string, sha256: string) =>
  `metadata: {type: extensions, id: ${name}}\nspec: {source: "${url(image)}", sha256: ${sha256}}\n`;
const welcomeDoc = (id: string, name: string) =>
  `metadata: {type: Welcomes.welcome.example.org, id: ${id}}\nspec: {name: ${name}}\n`;
const messageOf = async (vm: ApiVm, type: string, id: string, ms = 120_000) => {
  const r = await vm.poll(['get', type, id, '-o', 'json'], /"message"/, ms);
  return r.code === 0 ? (JSON.parse(r.out) as { spec: { message: string } }).spec.message : r.err;
};

t.test('one document set declares an extension and resources of its types: its manifest says them', async (t) => {
  t.match((await m.run(['get', 'welcomes'])).err, /welcomes/, 'a type nobody has defined yet');
  // An extension whose image cannot be had: its types stay unknown, and the config says why.
  const refused = await m.run(['apply', '-f', '-'], `${extensionDoc('welcome', 'welcome', 'b'.repeat(64))}---\n`
    + welcomeDoc('early', 'early'));
  t.equal(refused.code, 3, refused.err);
  t.match(refused.err, /extension welcome's types are unknown: .*its sha256 is .*not the b{64} declared/);
  t.equal(await statusOf('welcome'), undefined, 'nothing of it was applied');
  const applied = await m.run(['apply', '-f', '-'], `${extensionDoc('welcome', 'welcome', built.welcome!.sha256)}---\n`
    + welcomeDoc('together', 'together'));
  t.equal(applied.code, 0, applied.err);
  t.equal(await messageOf(m, 'WelcomeStatuses.welcome.example.org', 'together'), 'hello, together');
  t.equal((await until('welcome', (x) => x.phase === 'running'))?.phase, 'running');
});

t.test('pulled from a registry by digest over HTTPS: its CA named, unpacked, run; without the CA, the TLS failure said',
  { skip: registryMissing }, async (t) => {
    const digest = registry!.push(`${lighttpdOciLayout(dir, '<h1>pulled</h1>\n')}:latest`, 'apps/web:v1');
    const spec = (ca?: string) => JSON.stringify({ source: `oci://${REGISTRY_HOST.guestAddr}/apps/web@${digest}`,
      sha256: digest.slice('sha256:'.length), ...(ca ? { ca } : {}) });
    const apply = (ca?: string) =>
      m.run(['apply', '-f', '-'], `metadata: {type: extensions, id: web}\nspec: ${spec(ca)}\n`);
    t.equal((await apply()).code, 0);
    const untrusted = await until('web', (x) => /trying again/.test(x.error ?? ''));
    t.match(untrusted?.error, /certificate/, 'the machine\'s roots do not know the registry\'s CA: said, tried again');
    t.equal((await apply(registry!.ca)).code, 0);
    const s = await until('web', (x) => x.phase === 'running');
    t.match(s, { phase: 'running', version: `sha256-${digest.slice(7, 19)}` }, 'lighttpd runs, from the registry');
    t.match((await m.run(['logs', 'engine'])).out,
      /extension web: sha256-[0-9a-f]{12} mounted and checked \(\d+ bytes, (fetched|kept from before)/,
      'unpacked on the machine (when its config was applied, to learn its types, or as it starts)');
    t.equal((await m.run(['delete', 'extensionspec', 'web'])).code, 0);
    t.equal(await until('web', () => false, 20_000), undefined, 'deleted: gone');
  });

t.test('an extension in the machine config at boot (fw_cfg): it starts, and its types\' resources apply', async (t) => {
  m.vm.kill();
  const config = join(dir, 'boot-config.yaml');
  writeFileSync(config, `${TEST_CA_DOCUMENT()}---\n${extensionDoc('welcome', 'welcome', built.welcome!.sha256)}`
    + `---\n${welcomeDoc('at-boot', 'boot')}`);
  const b = await bootWithApi({
    memoryMiB: 384, guestfwd: [{ ...IMAGE_HOST, hostPort: server.port }],
    fwcfg: [{ name: 'opt/dev.appliance/config', file: config }],
  }, 'static', { secrets: 'none' });
  t.teardown(() => b.vm.kill());
  t.equal(await messageOf(b, 'WelcomeStatuses.welcome.example.org', 'at-boot', 240_000), 'hello, boot');
  const st = await b.run(['get', 'configstatus', 'machine', '-o', 'json']);
  t.match(st.out, /"state": "applied"/);
});
