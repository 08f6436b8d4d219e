// `appliance release` on a real repository folder and real keys: init with a root threshold, add (the bundle's own
// signature checked first), promote, pause, withdraw, refresh the timestamp, rotate and revoke keys, each refusal
// with its reason and exit code. The bundle is a real upgrade bundle signed by the appliance's key; what `add` builds
// is the appliance test's (qemu/appliance.test.ts), not this one's.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeUpgradeBundle } from '../../machinery/disk/upgrade-bundle.ts';
import type { ApplianceDefinition } from '../../image/appliance/definition.ts';
import { readRepository } from '../../image/release/tuf-repository.ts';
import { setPaused, viewRepository } from '../../image/release/channels.ts';
import { loadKeyFolders } from '../../image/release/tuf-keys.ts';
import { releaseMain, type ReleaseHost } from './release.ts';

const dir = mkdtempSync(join(tmpdir(), 'appliance-release-'));
const repo = join(dir, 'repo');
const keys = join(dir, 'keys');
const signing = generateKeyPairSync('ed25519').privateKey;
let version = '1.0.0';
let bundleKey = signing;
let bundleNote = '';
const bundleFile = join(dir, 'appliance-upgrade.tar');
const host: ReleaseHost = {
  definition: async () => ({ name: 'web', version, file: join(dir, 'appliance.yaml') }) as ApplianceDefinition,
  signingKey: () => ({ privateKey: signing, description: 'the test key' }),
  buildBundle: async () => {
    writeFileSync(bundleFile, encodeUpgradeBundle({ version, commit: bundleNote || 'c0ffee', cmdline: 'console=ttyS0',
      parts: [{ name: 'vmlinuz', data: Buffer.from('k') }, { name: 'initramfs.cpio.zst', data: Buffer.from('i') }],
      privateKey: bundleKey, mtime: 0 }));
    return bundleFile;
  },
};

/** Runs the command; its exit code and what it printed. */
async function release(...argv: string[]) {
  let out = '';
  let err = '';
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string) => (out += s, true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => (err += s, true)) as typeof process.stderr.write;
  try {
    const code = await releaseMain(argv, host);
    return { code, out, err };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}
const at = ['--repo', repo, '--keys', keys];
const offered = (channel: string) => {
  const c = viewRepository(repo).channels.find((x) => x.name === channel)?.info;
  return c instanceof Error || !c ? c : { release: c.release, paused: c.paused };
};

t.test('init: a repository, its keys, its expiries printed', async (t) => {
  const r = await release('init', ...at, '--root-keys', '2', '--root-threshold', '2');
  t.equal(r.code, 0, r.err);
  t.match(r.out, /root: .*root-1\.pem.*root-2\.pem.*threshold 2/);
  t.match(r.out, /signed timestamp version 1, expires 20/);
  t.match(r.out, /updates:\n {4}root: .*metadata\/1\.root\.json/);
  t.same(readdirSync(keys).sort(), ['root-1.pem', 'root-2.pem', 'snapshot.pem', 'targets.pem', 'timestamp.pem']);
  t.equal(readRepository(repo).root.signed.consistentSnapshot, true);
  const again = await release('init', ...at);
  t.equal(again.code, 1);
  t.match(again.err, /already holds an update repository/);
});

t.test('add: the bundle checked, then offered; a version names one bundle', async (t) => {
  const r = await release('add', ...at, '--waves', '0h=10%,1d=100%', '--min-from', '0.9.0');
  t.equal(r.code, 0, r.err);
  t.match(r.out, /web 1\.0\.0 added to channel stable .*waves 0h=10%,1d=100%, from 0\.9\.0 up/);
  t.same(offered('stable'), { release: 'releases/web-1.0.0.tar', paused: false });
  const rel = viewRepository(repo).releases[0]!;
  t.match(rel.info, { name: 'web', version: '1.0.0', minFromVersion: '0.9.0', waves: [{ after: 0, percent: 10 },
    { after: 86400, percent: 100 }] });
  bundleNote = 'other bytes';
  const twice = await release('add', ...at);
  t.equal(twice.code, 1);
  t.match(twice.err, /holds version 1\.0\.0 with other bytes .*build a new version/);
  bundleNote = '';
  const beta = await release('add', ...at, '--channel', 'beta');
  t.equal(beta.code, 0, beta.err);
  t.match(beta.out, /web 1\.0\.0 promoted to channel beta/);
  version = '1.1.0';
  bundleKey = generateKeyPairSync('ed25519').privateKey;
  const foreign = await release('add', ...at);
  t.equal(foreign.code, 1, 'a bundle the appliance\'s key did not sign is not published');
  t.match(foreign.err, /signature|key/);
  bundleKey = signing;
  t.equal((await release('add', ...at)).code, 0);
  t.same(offered('stable'), { release: 'releases/web-1.1.0.tar', paused: false });
  version = '1.0.5';
  const lower = await release('add', ...at);
  t.equal(lower.code, 1);
  t.match(lower.err, /channel stable offers 1\.1\.0, higher than 1\.0\.5/);
});

t.test('pause, resume, withdraw', async (t) => {
  t.equal((await release('pause', ...at)).code, 0);
  t.same(offered('stable'), { release: 'releases/web-1.1.0.tar', paused: true });
  const twice = await release('pause', ...at);
  t.equal(twice.code, 1);
  t.match(twice.err, /already paused/);
  t.equal((await release('resume', ...at)).code, 0);
  const w = await release('withdraw', '1.1.0', ...at);
  t.equal(w.code, 0, w.err);
  t.match(w.out, /web 1\.1\.0 withdrawn; stable now offers releases\/web-1\.0\.0\.tar/);
  t.same(offered('stable'), { release: 'releases/web-1.0.0.tar', paused: false });
  t.notOk(readRepository(repo).targets.signed.targets['releases/web-1.1.0.tar'], 'its target is gone');
  t.equal((await release('withdraw', '1.1.0', ...at)).code, 1);
});

t.test('refresh-timestamp: a new timestamp only', async (t) => {
  const before = readRepository(repo);
  const r = await release('refresh-timestamp', ...at, '--expires', '2');
  t.equal(r.code, 0, r.err);
  const after = readRepository(repo);
  t.equal(after.timestamp.signed.version, before.timestamp.signed.version + 1);
  t.equal(after.snapshot.signed.version, before.snapshot.signed.version);
  const days = (Date.parse(after.timestamp.signed.expires) - Date.now()) / 86_400_000;
  t.ok(days > 1.9 && days <= 2, `expires in ${days.toFixed(2)} days`);
});

t.test('keys: a threshold of the old root signs the new one; a revoked key no longer signs', async (t) => {
  // One root key away (offline elsewhere): the threshold of 2 cannot be met.
  mkdirSync(join(dir, 'offline'));
  renameSync(join(keys, 'root-2.pem'), join(dir, 'offline', 'root-2.pem'));
  const short = await release('keys', 'add', 'timestamp', ...at);
  t.equal(short.code, 1);
  t.match(short.err, /root version 2 \(the old root's keys\): root needs 2 signature\(s\) .*the key folders hold 1/);
  t.equal(readRepository(repo).root.signed.version, 1, 'nothing written');
  const both = ['--repo', repo, '--keys', `${keys},${join(dir, 'offline')}`];
  const added = await release('keys', 'add', 'timestamp', ...both, '--threshold', '2');
  t.equal(added.code, 0, added.err);
  t.match(added.out, /timestamp: added .*; 2 key\(s\), threshold 2/);
  const root = readRepository(repo).root.signed;
  t.equal(root.version, 2);
  t.equal(root.roles.timestamp!.keyIDs.length, 2);
  const oldTimestamp = root.roles.timestamp!.keyIDs[0]!;
  const revoked = await release('keys', 'revoke', 'timestamp', oldTimestamp.slice(0, 12), ...both,
    '--threshold', '1');
  t.equal(revoked.code, 0, revoked.err);
  const after = readRepository(repo);
  t.equal(after.root.signed.version, 3);
  t.same(Object.keys(after.timestamp.signatures), after.root.signed.roles.timestamp!.keyIDs,
    'the timestamp is signed anew by the key left');
  t.notOk(after.root.signed.keys[oldTimestamp], 'the revoked key is gone from the root');
  const json = JSON.parse(readFileSync(join(repo, 'metadata', '3.root.json'), 'utf8')) as { signatures: unknown[] };
  t.equal(json.signatures.length, 2, 'root 3 signed by both root keys (the old root\'s threshold, and its own)');
});

t.test('usage', async (t) => {
  t.equal((await release()).code, 2);
  t.match((await release('--help')).out, /usage: appliance release <action>/);
  const bad = await release('add', ...at, '--waves', '1h=50%');
  t.equal(bad.code, 2);
  t.match(bad.err, /the last wave must take 100%/);
  t.match((await release('launch', ...at)).err, /"launch": not an action/);
  t.match((await release('status', '--repo', join(dir, 'nowhere'))).err, /not an update repository/);
  const s = await release('status', '--repo', repo);
  t.equal(s.code, 0);
  t.match(s.out, /stable: releases\/web-1\.0\.0\.tar, withdrew 1\.1\.0 at/);
  t.match(s.out, /web 1\.0\.0: published .*waves 0h=10%,1d=100%, from 0\.9\.0 up/);
});

t.test('refresh: what is near its expiry is signed anew; refresh ROLE signs that role', async (t) => {
  const r2 = join(dir, 'short');
  const k2 = join(dir, 'short-keys');
  const init = await release('init', '--repo', r2, '--keys', k2, '--expires', '5');
  t.equal(init.code, 0, init.err);
  const s = await release('status', '--repo', r2);
  t.match(s.out, /root +version 1, .*threshold 1 {2}EXPIRES SOON: appliance release refresh root/);
  t.match(s.out, /snapshot +version 1, .*EXPIRES SOON/);
  t.notMatch(s.out, /timestamp .*EXPIRES SOON/, 'the timestamp is refreshed daily anyway');
  const before = readRepository(r2);
  const r = await release('refresh-timestamp', '--repo', r2, '--keys', k2);
  t.equal(r.code, 0, r.err);
  t.match(r.out,
    /signed root version 2.*\n.*signed targets version 2.*\n.*signed snapshot version 2.*\n.*signed timestamp/);
  const after = readRepository(r2);
  t.ok(Date.parse(after.snapshot.signed.expires) - Date.parse(before.snapshot.signed.expires) > 20 * 86_400_000,
    'the snapshot lasts its default 30 days again');
  // Far from expiry now: the timestamp alone.
  const again = await release('refresh-timestamp', '--repo', r2, '--keys', k2);
  t.match(again.out, /^ {2}signed timestamp version 3, expires \S+\n$/);
  // The root's keys elsewhere: said, not refused.
  const dueRoot = join(dir, 'due-root');
  t.equal((await release('init', '--repo', dueRoot, '--keys', join(dir, 'due-keys'), '--expires', '5')).code, 0);
  renameSync(join(dir, 'due-keys', 'root.pem'), join(dir, 'offline', 'due-root.pem'));
  const without = await release('refresh-timestamp', '--repo', dueRoot, '--keys', join(dir, 'due-keys'));
  t.equal(without.code, 0, without.err);
  t.match(without.err, /root expires \S+: sign it anew with its keys \(appliance release refresh root --keys DIR\)/);
  t.equal(readRepository(dueRoot).root.signed.version, 1);
  const snapshot = await release('refresh', 'snapshot', '--repo', r2, '--keys', k2);
  t.match(snapshot.out, /signed snapshot version 3.*\n.*signed timestamp version 4/);
  t.equal((await release('refresh', 'roots', '--repo', r2, '--keys', k2)).code, 2);
});

t.test('one publish at a time; a file another publish wrote is never replaced', async (t) => {
  const lock = join(repo, 'metadata', '.lock');
  writeFileSync(lock, `${process.pid}\n`);
  const busy = await release('refresh-timestamp', ...at);
  t.equal(busy.code, 1);
  t.match(busy.err, /another publish \(pid \d+\) holds .*\.lock; try again when it is done/);
  writeFileSync(lock, '999999999\n');
  t.equal((await release('refresh-timestamp', ...at)).code, 0, 'a lock whose holder is gone is taken over');
  const next = readRepository(repo).snapshot.signed.version + 1;
  writeFileSync(join(repo, 'metadata', `${next}.snapshot.json`), '{"not": "this publish\'s"}');
  const timestamp = readFileSync(join(repo, 'metadata', 'timestamp.json'));
  const clash = await release('pause', ...at);
  t.equal(clash.code, 1);
  t.match(clash.err, new RegExp(`${next}\\.snapshot\\.json exists with other bytes: another publish wrote it`));
  t.ok(readFileSync(join(repo, 'metadata', 'timestamp.json')).equals(timestamp), 'nothing was written');
  rmSync(join(repo, 'metadata', `${next}.snapshot.json`));
});

t.test('a promoted or resumed release: its waves count from when the channel offered it', async (t) => {
  const stable = viewRepository(repo).channels.find((c) => c.name === 'stable')!.info as { since?: string };
  const beta = viewRepository(repo).channels.find((c) => c.name === 'beta')!.info as { since?: string;
    changed: string };
  t.ok(beta.since, 'since: when beta began offering 1.0.0');
  t.ok(stable.since && stable.since >= beta.since!, 'stable offered it from its own time');
  // Paused for an hour (times given, as a publisher's clock would have them): the waves move on by the hour.
  const keysNow = loadKeyFolders([keys, join(dir, 'offline')]);
  const t0 = new Date(Date.parse(stable.since!) + 60_000);
  setPaused(repo, keysNow, 'stable', true, t0);
  setPaused(repo, keysNow, 'stable', false, new Date(t0.getTime() + 3_600_000));
  const resumed = viewRepository(repo).channels.find((c) => c.name === 'stable')!.info as { since?: string };
  t.equal(Date.parse(resumed.since!) - Date.parse(stable.since!), 3_600_000, 'since moved on by the pause');
});
