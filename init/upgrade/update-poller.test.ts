// The update poller against the built engine (`serve`) and a real HTTP server on loopback serving a repository our
// publisher wrote (image/release/), strict and misbehaving on purpose: waves, a pause, every TUF refusal the issue
// names (expired, rolled back, too few signatures, a tampered bundle) with nothing taken, key rotation. On a host the
// last step, the upgrade itself, is refused by the upgrader ("runs on a host"): the QEMU test takes it further.
import t, { type Test } from 'tap';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe } from '../engine/serve-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import type { UpdatePolicySpec, UpdateStatusSpec } from '../../proto/gen/spec-types.ts';
import { CONFIG_NS, RUNTIME_NS, UPDATE_POLICY_TYPE, UPDATE_STATUS_TYPE, UPGRADE_STATUS_TYPE } from
  '../../proto/gen/resource-types.ts';
import { generateKeyFile, loadKeyFolders, signerOf } from '../../image/release/tuf-keys.ts';
import { Metadata, MetadataKind, MetaFile, Timestamp } from '@tufjs/models';
import { commitChanges, createRepository, metadataDir, rootFile } from '../../image/release/tuf-repository.ts';
import { addRelease, setPaused } from '../../image/release/channels.ts';
import { parseWaves } from '../../machinery/update/waves.ts';
import { serveRepository } from '../../image/release/testing/repository-server.ts';
import { createHash, createPublicKey } from 'node:crypto';

const dir = mkdtempSync(join(tmpdir(), 'update-poller-'));
const repo = join(dir, 'repo');
const keysDir = join(dir, 'keys');
const made = Object.fromEntries(['root', 'targets', 'snapshot', 'timestamp']
  .map((r) => [r, generateKeyFile(keysDir, r)]));
let keys = loadKeyFolders([keysDir]);
const roles = Object.fromEntries(Object.entries(made).map(([r, k]) => [r, { keys: [k.privateKey], threshold: 1 }]));
createRepository(repo, { roles: roles as never }, keys, new Date());
const waves = parseWaves('0s=10%,1h=100%');
if (waves instanceof Error) throw waves;
const bundle = Buffer.from('a bundle: on a host the upgrader refuses it before reading a byte of it');
addRelease(repo, keys, { name: 'web', version: '9.9.0', bundle, channel: 'stable', waves, now: new Date() });
const firstTimestamp = readFileSync(join(metadataDir(repo), 'timestamp.json'));

// The repository as served; a test swaps one path's bytes for an attacker's.
const server = await serveRepository(repo);
t.teardown(() => server.close());
const { swapped, url } = server;

const served = await startServe(artifacts().exe, ['--no-plugins', '--state-dir', join(dir, 'state')]);
t.teardown(() => served.stop());
const api = served.client();
t.teardown(() => api.close());

const policy = (extra: Partial<UpdatePolicySpec>): UpdatePolicySpec => ({
  urls: [url], channel: 'stable', root: readFileSync(rootFile(repo, 1), 'utf8'), pollIntervalSeconds: 1, window: '',
  healthTimeoutSeconds: 0, seed: 2047, ...extra,
});
const pointer = { namespace: CONFIG_NS, type: UPDATE_POLICY_TYPE, id: 'fleet' };
const setPolicy = async (extra: Partial<UpdatePolicySpec>) => {
  const cur = await api.get(pointer).catch(() => undefined);
  if (cur) await api.update({ ...cur, spec: policy(extra) });
  else await api.create(newResource(pointer, policy(extra)));
};
const status = async () => (await api.get({ namespace: RUNTIME_NS, type: UPDATE_STATUS_TYPE, id: 'fleet' })
  .catch(() => undefined))?.spec as UpdateStatusSpec | undefined;
/** Waits for a status `ok` accepts; fails with the last one seen. */
const statusWhere = async (what: string, ok: (s: UpdateStatusSpec) => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  let last: UpdateStatusSpec | undefined;
  while (Date.now() < end) {
    last = await status();
    if (last && ok(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no UpdateStatus ${what} within ${ms} ms; the last: ${JSON.stringify(last)}`);
};
const upgrades = async () => (await api.list({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE })).length;

t.test('a machine in a later wave sees the release and waits for its wave', async (t) => {
  await setPolicy({});
  const s = await statusWhere('waiting', (x) => x.state === 'waiting');
  t.equal(s.offeredVersion, '9.9.0');
  t.equal(s.seed, 2047);
  t.equal(s.wave, 1);
  t.match(s.reason, /^wave 1 \(seed 2047\) takes 9\.9\.0 from /);
  t.same([s.rootVersion, s.targetsVersion, s.snapshotVersion, s.timestampVersion], [1, 2, 2, 2]);
  t.ok(s.metadataBytes > 1000, `the first poll fetched ${s.metadataBytes} bytes of metadata`);
  t.ok(s.nextCheck, 'says when it polls next');
  t.equal(await upgrades(), 0);
});

t.test('a paused channel holds every machine, its own wave open or not', async (t) => {
  setPaused(repo, keys, 'stable', true, new Date());
  const s = await statusWhere('paused', (x) => /paused/.test(x.reason));
  t.match(s.reason, /^channel stable is paused \(paused at /);
  t.equal(s.targetsVersion, 3);
  await setPolicy({ seed: 0 });
  const again = await statusWhere('paused with seed 0', (x) => x.seed === 0 && /paused/.test(x.reason));
  t.equal(again.state, 'waiting');
  t.equal(await upgrades(), 0, 'nothing taken while paused');
});

/** An attack: the swap served, the status's refusal awaited, then nothing taken and the swap undone. */
const attack = async (t: Test, path: string, bytes: Buffer, words: RegExp, then?: () => void) => {
  const before = await status();
  const started = await upgrades();
  swapped.set(path, bytes);
  then?.();
  const s = await statusWhere(`refusing ${path}`, (x) => x.state === 'error' && words.test(x.error));
  t.match(s.error, words);
  // `then` published a change itself (a new targets version): the machine may trust that one.
  if (!then) t.equal(s.targetsVersion, before!.targetsVersion, 'the targets trusted are still the last good ones');
  t.equal(await upgrades(), started, 'no upgrade started');
  swapped.delete(path);
};

t.test('every TUF refusal is named and nothing is taken', async (t) => {
  const ts = join(metadataDir(repo), 'timestamp.json');
  // Rolled back: the first timestamp again, older than the one trusted.
  await attack(t, '/metadata/timestamp.json', firstTimestamp,
    /^a rolled-back version .*timestamp version [0-9]+ is less than current/);
  // Too few signatures: the real timestamp with its signature altered.
  const real = JSON.parse(readFileSync(ts, 'utf8')) as { signatures: { sig: string }[] };
  real.signatures[0]!.sig = real.signatures[0]!.sig.replace(/^../, (x) => (x === '00' ? '11' : '00'));
  await attack(t, '/metadata/timestamp.json', Buffer.from(JSON.stringify(real)), /^too few valid signatures/);
  // Expired: a timestamp signed by the real key (a repository nobody refreshed), newer but past its expiry.
  const stale = join(dir, 'stale');
  cpSync(repo, stale, { recursive: true });
  commitChanges(stale, keys, { resign: ['timestamp'], expiresDays: { timestamp: -1 } }, new Date());
  await attack(t, '/metadata/timestamp.json', readFileSync(join(metadataDir(stale), 'timestamp.json')),
    /^expired metadata .*timestamp\.json is expired/);
  // The timestamp key stolen (it is the online one): a timestamp signed with it names an older snapshot, to hold the
  // fleet on an old release. The snapshot's version is checked against the one trusted.
  const current = Metadata.fromJSON(MetadataKind.Timestamp, JSON.parse(readFileSync(ts, 'utf8')) as never);
  const older = current.signed.snapshotMeta.version - 1;
  const olderBytes = readFileSync(join(metadataDir(repo), `${older}.snapshot.json`));
  const stolen = new Metadata(new Timestamp({ version: current.signed.version + 1, specVersion: '1.0.31',
    expires: current.signed.expires, snapshotMeta: new MetaFile({ version: older, length: olderBytes.length,
      hashes: { sha256: createHash('sha256').update(olderBytes).digest('hex') } }) }));
  stolen.sign(signerOf(made.timestamp!));
  await attack(t, '/metadata/timestamp.json', Buffer.from(JSON.stringify(stolen.toJSON())),
    /^a rolled-back version .*snapshot version [0-9]+ is less than current version [0-9]+/i);
  // A tampered bundle is refused on its way into the upgrader (update-client.test.ts): on a host the upgrader
  // refuses every upgrade before it reads a byte, so it is not seen here.
});

t.test('with its wave open and nothing wrong, the release is handed to the upgrader', async (t) => {
  setPaused(repo, keys, 'stable', false, new Date());
  const s = await statusWhere('handed over', (x) => x.upgradeId === 'update-9.9.0' && x.state === 'error');
  t.match(s.error, /9\.9\.0: the upgrade failed: this engine runs on a host \(serve\): it upgrades nothing/);
  t.equal(s.bundleBytes, 0, 'the host\'s upgrader refused before a byte of the bundle was fetched');
  t.equal(await upgrades(), 1);
});

t.test('keys rotate through TUF: a new root signed by the old and the new, new timestamp key', async (t) => {
  const newRoot = generateKeyFile(keysDir, 'root-2');
  const newTimestamp = generateKeyFile(keysDir, 'timestamp-2');
  keys = loadKeyFolders([keysDir]);
  commitChanges(repo, keys, { roles: {
    root: { keys: [createPublicKey(newRoot.privateKey)], threshold: 1 },
    timestamp: { keys: [createPublicKey(newTimestamp.privateKey)], threshold: 1 },
  } }, new Date());
  const s = await statusWhere('root 2', (x) => x.rootVersion === 2 && x.state !== 'checking');
  // Its error, if any, is the host's refusal to upgrade, not TUF's.
  t.notMatch(s.error, /signatures|expired|rolled|mismatch/, 'the rotated repository is trusted');
  // The old timestamp key no longer counts: the publisher will not sign with it, and a machine refuses its signature.
  const oldKeys = loadKeyFolders([keysDir]);
  oldKeys.delete(newTimestamp.id);
  t.throws(() => commitChanges(repo, oldKeys, { resign: ['timestamp'] }, new Date()),
    /timestamp version [0-9]+: timestamp needs 1 signature\(s\) of its keys .*the key folders hold 0/);
  const current = Metadata.fromJSON(MetadataKind.Timestamp,
    JSON.parse(readFileSync(join(metadataDir(repo), 'timestamp.json'), 'utf8')) as never);
  const forged = new Metadata(Timestamp.fromJSON({ ...current.signed.toJSON(), version: current.signed.version + 1 }));
  forged.sign(signerOf(made.timestamp!));
  await attack(t, '/metadata/timestamp.json', Buffer.from(JSON.stringify(forged.toJSON())),
    /^too few valid signatures.*timestamp was signed by 0\/1 keys/);
});
