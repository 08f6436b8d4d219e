// A fleet of two installed machines (256 MiB each, SeaBIOS: upgrade.test covers OVMF; booted at once) pulling their
// upgrades from a TUF repository this test publishes with the appliance's own publisher (image/release/), served by a
// loopback HTTP server each machine reaches through its own guestfwd (so the bytes each fetched are counted apart). The
// machine of seed 0 (wave 0) takes a release at once; the machine of seed 2047 only once its wave opens. A release
// whose network plugin crash-loops goes out while the second machine still tries the first release: it fails its
// health-gated trial on the first machine, which falls back and never takes it again; once the channel is paused it
// never reaches the second. A real Prometheus, started as that release goes out, scrapes both over mutual TLS with a
// reader's certificate, and cosictl --nodes shows the fleet in one view. Prints the figures: publish to the last
// machine upgraded, bytes fetched per machine, metadata bytes per poll.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE } from '../scripts/lib/paths.ts';
import { generateKeyFile, loadKeyFolders } from '../image/release/tuf-keys.ts';
import { createRepository, rootFile } from '../image/release/tuf-repository.ts';
import { addRelease, setPaused } from '../image/release/channels.ts';
import { parseWaves } from '../machinery/update/waves.ts';
import { serveRepository, type RepositoryServer } from '../image/release/testing/repository-server.ts';
import { freePort } from './free-port.ts';
import { IMAGE_PLUGINS, type ApiVm } from './api-machine.ts';
import { bootDisk, dir, freshDisk, good, variant } from './upgrade-setup.ts';
import { readyAgain } from './upgrade-steps.ts';

t.setTimeout(1_200_000);
const PROMETHEUS = join(CACHE, 'tools', 'prometheus', 'usr', 'bin', 'prometheus');
const REPO_HOST = { guestAddr: '10.0.2.100', guestPort: 80 };
// The same build as upgrade.test's crash-looping network plugin: made once per run.
const broken = variant('fleet-broken', '0.9.2', 'plugin-crash:network');

// The repository and its keys, made as `appliance release init` makes them.
const repo = join(dir, 'fleet-repo');
const keysDir = join(dir, 'fleet-keys');
const roleKeys = Object.fromEntries(['root', 'targets', 'snapshot', 'timestamp'].map((r) => {
  const k = generateKeyFile(keysDir, r);
  return [r, { keys: [createPublicKey(k.privateKey)], threshold: 1 }];
}));
const keys = loadKeyFolders([keysDir]);
createRepository(repo, { roles: roleKeys as never }, keys, new Date());
const root = readFileSync(rootFile(repo, 1), 'utf8');
const release = (version: string, bundle: string, waves: string) => {
  const w = parseWaves(waves);
  if (w instanceof Error) throw w;
  addRelease(repo, keys, { name: 'appliance', version, bundle: readFileSync(bundle), channel: 'stable', waves: w,
    now: new Date() });
};

interface Member { name: string; seed: number; m: ApiVm; server: RepositoryServer; metricsPort: number }
async function member(name: string, seed: number): Promise<Member> {
  // One server per machine over the same folder: what each fetched, metadata and bundles apart.
  const server = await serveRepository(repo);
  t.teardown(() => server.close());
  const metricsPort = await freePort();
  const m = await bootDisk(t, freshDisk('seabios', name), 'seabios', 256, {
    guestfwd: [{ ...REPO_HOST, hostPort: server.port }], hostfwd: [{ hostPort: metricsPort, guestPort: 9100 }],
  }, name);
  return { name, seed, m, server, metricsPort };
}
const policy = (x: Member, healthTimeoutSeconds: number) => `metadata: {type: updatepolicy, id: fleet}
spec:
  urls: ["http://${REPO_HOST.guestAddr}/"]
  channel: stable
  pollIntervalSeconds: 5
  seed: ${x.seed}
  healthTimeoutSeconds: ${healthTimeoutSeconds}
  root: ${JSON.stringify(root)}
`;
/** Applies `doc`; asked again while the API cannot be reached (a machine busy starting), never on a refusal. */
const apply = async (x: Member, doc: string) => {
  for (let tries = 1; ; tries++) {
    const r = await x.m.run(['apply', '-f', '-'], doc);
    if (r.code === 0 || tries === 3 || !/cannot reach the COSI API/.test(r.err)) return r;
  }
};
const configure = async (x: Member) => {
  // A 256 MiB machine starting its plugins beside another machine may not answer for a few seconds.
  await x.m.awaitPlugins(IMAGE_PLUGINS);
  const r = await apply(x, `${policy(x, 150)}---
metadata: {type: hostnamespec, id: fleet}
spec: {hostname: ${x.name}}
---
metadata: {type: metrics, id: prom}
spec: {listen: "0.0.0.0:9100"}
`);
  if (r.code !== 0) throw new Error(`${x.name}: apply: ${r.err}`);
};
interface UpdateStatus { state: string; reason: string; error: string; offeredVersion: string; wave: number;
  waveOpens?: string; failedVersions?: string[]; metadataBytes: number; upgradeId: string; runningVersion: string }
const updateStatus = async (x: Member): Promise<UpdateStatus | undefined> => {
  const r = await x.m.run(['get', 'updatestatus', 'fleet', '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.out) as { spec: UpdateStatus }).spec : undefined;
};
const statusWhere = async (x: Member, what: string, ok: (s: UpdateStatus) => boolean, ms = 300_000) => {
  const end = Date.now() + ms;
  let last: UpdateStatus | undefined;
  while (Date.now() < end) {
    last = await updateStatus(x).catch(() => undefined);
    if (last && ok(last)) return last;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${x.name}: no UpdateStatus ${what} within ${ms / 1000} s; the last: ${JSON.stringify(last)}`);
};
const upgradeStatus = async (x: Member, id: string) => {
  const r = await x.m.run(['get', 'upgradestatus', id, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.out) as { spec: { phase: string; startedAt: string; error: string } }).spec
    : undefined;
};

const [one, two] = await Promise.all([member('fleet-1', 0), member('fleet-2', 2047)]);
await Promise.all([configure(one!), configure(two!)]);

/** The last machine's upgrade to 0.9.0 marked good (its time), awaited once the failing release is under way. */
let lastDone: Promise<number> | undefined;
let published = 0;
const bundleOnce = (t: Test, x: Member, s: UpdateStatus) => {
  process.stderr.write(`# fleet: ${x.name} fetched ${x.server.served.targets} bytes of bundles and `
    + `${x.server.served.metadata} of metadata; a poll with nothing new fetches ${s.metadataBytes} bytes\n`);
  const bundles = x.server.served.targets;
  const size = statSync(good).size;
  t.ok(bundles >= size && bundles < 2 * size, `${x.name}: the bundle fetched once`);
};

t.test('wave 0 upgrades at once, the last wave only once it opens', async (t) => {
  for (const x of [one!, two!]) {
    const s = await statusWhere(x, 'polled', (s) => s.state === 'up-to-date', 120_000);
    t.match(s.reason, /no channel stable/, `${x.name}: an empty repository polled`);
  }
  published = Date.now();
  release('0.9.0', good, '0s=10%,20s=100%');
  const waiting = await statusWhere(two!, 'waiting for its wave', (s) => s.state === 'waiting');
  t.match(waiting.reason, /^wave 1 \(seed 2047\) takes 0\.9\.0 from /);
  await readyAgain(one!.m, 2);
  await one!.m.poll(['get', 'upgradestatus', 'update-0.9.0'], /done/, 180_000);
  process.stderr.write(`# fleet: from publish to wave 0 upgraded ${((Date.now() - published) / 1000).toFixed(1)} s\n`);
  bundleOnce(t, one!, await statusWhere(one!, 'up to date on 0.9.0',
    (s) => s.state === 'up-to-date' && s.runningVersion === '0.9.0'));
  // The last wave's machine started at its wave's time; it may still be trying 0.9.0 while the next release goes out.
  const started = await two!.m.poll(['get', 'upgradestatus', 'update-0.9.0'], /update-0\.9\.0/, 180_000);
  t.equal(started.code, 0, started.err);
  const twoStarted = Date.parse((await upgradeStatus(two!, 'update-0.9.0'))!.startedAt);
  t.ok(twoStarted >= Date.parse(waiting.waveOpens!), `the second machine started at its wave `
    + `(${new Date(twoStarted).toISOString()} >= ${waiting.waveOpens})`);
  lastDone = (async () => {
    await readyAgain(two!.m, 2);
    await two!.m.poll(['get', 'upgradestatus', 'update-0.9.0'], /done/, 300_000);
    return Date.now();
  })();
  lastDone.catch(() => {}); // said where it is awaited
});

/** A real Prometheus scraping both machines over HTTPS with a reader's certificate, through hostfwd on 127.0.0.1. */
async function startPrometheus() {
  const promDir = join(dir, 'prometheus');
  mkdirSync(promDir, { recursive: true });
  const tls = one!.m.tls('reader');
  writeFileSync(join(promDir, 'ca.pem'), tls.ca!);
  writeFileSync(join(promDir, 'reader.pem'), tls.cert!);
  writeFileSync(join(promDir, 'reader-key.pem'), tls.key!, { mode: 0o600 });
  const job = (x: Member) => `  - job_name: ${x.name}
    scheme: https
    scrape_interval: 2s
    tls_config: {ca_file: ca.pem, cert_file: reader.pem, key_file: reader-key.pem, server_name: ${x.name}}
    static_configs: [{targets: ["127.0.0.1:${x.metricsPort}"]}]
`;
  writeFileSync(join(promDir, 'prometheus.yml'),
    `global: {scrape_interval: 2s}\nscrape_configs:\n${job(one!)}${job(two!)}`);
  const port = await freePort();
  const prom = spawn(PROMETHEUS, [`--config.file=${join(promDir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
  { cwd: promDir, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  prom.stderr!.on('data', (d: Buffer) => {
    log += d;
  });
  t.teardown(() => prom.kill());
  const query = async (q: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
    return (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
  };
  const warnings = () => log.split('\n').filter((l) => /level=(warn|error)/.test(l)).slice(-2).join(' ');
  return { query, warnings };
}
let prometheus: ReturnType<typeof startPrometheus> | undefined;

t.test('a release that fails its trial rolls back on wave 0 and, paused, never reaches the last wave', async (t) => {
  // A shorter trial for this release: its network plugin never comes up.
  const r = await apply(one!, policy(one!, 10));
  t.equal(r.code, 0, r.err);
  release('0.9.2', broken, '0s=10%,1h=100%');
  prometheus = startPrometheus(); // scraping while the first machine tries 0.9.2 and falls back
  await readyAgain(one!.m, 4, 420_000); // 0.9.2's ready line, then 0.9.0's again after the fallback
  const failed = await statusWhere(one!, '0.9.2 failed', (s) => (s.failedVersions ?? []).includes('0.9.2'));
  t.equal(failed.runningVersion, '0.9.0', 'back on 0.9.0');
  t.match((await upgradeStatus(one!, 'update-0.9.2'))?.error, /health checks did not pass/);
  const last = await lastDone!;
  process.stderr.write(`# fleet: from publish to the last machine upgraded ${((last - published) / 1000).toFixed(1)} s `
    + '(its wave opened after 20 s)\n');
  const next = await statusWhere(two!, 'waiting for its wave to take 0.9.2',
    (s) => s.runningVersion === '0.9.0' && s.offeredVersion === '0.9.2' && s.state === 'waiting');
  t.match(next.reason, /^wave 1 \(seed 2047\) takes 0\.9\.2 from /);
  bundleOnce(t, two!, next);
  setPaused(repo, keys, 'stable', true, new Date());
  const held = await statusWhere(two!, 'paused', (s) => /paused/.test(s.reason), 60_000);
  t.equal(held.offeredVersion, '0.9.2');
  t.equal(held.runningVersion, '0.9.0');
  t.equal(await upgradeStatus(two!, 'update-0.9.2'), undefined, 'the last wave never took it');
  const again = await statusWhere(one!, 'not taking 0.9.2 again', (s) => s.state === 'waiting');
  t.match(again.reason, /paused|failed its try/);
});

t.test('Prometheus scrapes both machines over mutual TLS with a reader\'s certificate', async (t) => {
  const { query, warnings } = await prometheus!;
  let info: Awaited<ReturnType<typeof query>>['data']['result'] = [];
  // A scrape can land while a machine polls the repository (`checking`, a second or so every 5 s on a loaded TCG
  // host): asked again until a scrape finds both at rest, as they are between polls.
  const both = () => info.length === 2 && info.every((r) => r.metric.version === '0.9.0'
    && r.metric.update_state === 'waiting');
  for (let i = 0; i < 90 && !both(); i++) {
    info = (await query('appliance_info').catch(() => ({ data: { result: [] } }))).data.result;
    if (!both()) await new Promise((r) => setTimeout(r, 1000));
  }
  t.same(info.map((r) => [r.metric.job, r.metric.version, r.metric.update_state]).sort(),
    [['fleet-1', '0.9.0', 'waiting'], ['fleet-2', '0.9.0', 'waiting']], `both scraped (prometheus: ${warnings()})`);
  const up = (await query('up')).data.result;
  t.same(up.map((r) => r.value[1]), ['1', '1'], 'both targets up');
});

t.test('the fleet in one view: cosictl --nodes', async (t) => {
  const r = await one!.m.run(['--nodes', `${one!.m.endpoint},${two!.m.endpoint}`, 'get', 'versions,updatestatus']);
  t.equal(r.code, 0, r.err);
  for (const x of [one!, two!]) t.match(r.out, new RegExp(x.m.endpoint.replace(/\./g, '\\.')));
  t.match(r.out, /0\.9\.2/, 'what is offered');
  process.stderr.write(`${r.out.split('\n').map((l) => `# ${l}`).join('\n')}\n`);
});
