// release: `appliance release`, publishing an appliance's upgrades to a TUF update repository its machines poll
// (image/release/): make the repository and its keys, add a build's bundle to a channel with a wave schedule,
// pause, resume or withdraw, refresh the timestamp (a scheduled job), add and revoke role keys (a new root signed by
// the old root's keys and its own), and show where it all stands.
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { ApplianceDefinition } from '../../image/appliance/definition.ts';
import type { SigningKey } from '../../image/formats/format.ts';
import { UpgradeBundleError, verifyUpgradeBundle } from '../../machinery/disk/upgrade-bundle.ts';
import { CHANNEL_RE } from '../../machinery/update/release-meta.ts';
import { ALL_AT_ONCE, formatWaves, parseWaves } from '../../machinery/update/waves.ts';
import { addRelease, setPaused, viewRepository, withdrawRelease } from '../../image/release/channels.ts';
import { generateKeyFile, loadKeyFolders, publicKeyOf, ReleaseRefused } from '../../image/release/tuf-keys.ts';
import {
  commitChanges, createRepository, DEFAULT_EXPIRY_DAYS, readRepository, refuseExistingRepository, ROLES, rolesDue,
  rootFile, type Committed, type RoleName,
} from '../../image/release/tuf-repository.ts';

const EXPIRIES = Object.entries(DEFAULT_EXPIRY_DAYS).map(([role, days]) => `${role} ${days}`).join(', ');

export const RELEASE_HELP = `usage: appliance release <action> --repo DIR [options]

Publishes the appliance's upgrades to a TUF update repository: a folder of signed metadata and bundles
that any HTTP server, bucket or CDN serves as it is. Machines whose appliance.yaml has \`updates:\` poll
it, check every signature, threshold and expiry TUF asks for, and upgrade in staged waves.

actions:
  init              make the repository in --repo and its first keys in --keys (refused where one is)
  add               build the appliance's upgrade bundle and offer it on a channel
  status            the roles (version, expiry, keys), the channels and the releases
  pause, resume     stop or restart a channel's rollout (machines not yet upgraded wait)
  withdraw VERSION  take a release out; its channels go back to what they offered before
  refresh-timestamp sign the timestamp anew (it lasts ${DEFAULT_EXPIRY_DAYS.timestamp} days: run this daily from a
                    scheduled job), and any role within a third of its validity of expiring whose keys are here
  refresh ROLE...   sign these roles anew (root with the root keys: a new root version)
  keys add ROLE     add a key (made in --new-keys, default the first --keys) to a role: a new root
  keys revoke ROLE KEYID
                    remove a key from a role: a new root, signed by the old root's keys and its own

options:
  --repo DIR            the repository folder (what is published)
  --keys DIR[,DIR]      folders of the roles' private keys (*.pem); keep them off the published folder
  -f, --file FILE       the appliance definition (add, withdraw; default ./appliance.yaml)
  --channel NAME        add, pause, resume (default stable)
  --waves SCHEDULE      add: TIME=PERCENT,... e.g. 0h=10%,6h=50%,1d=100% (default ${formatWaves(ALL_AT_ONCE)})
  --min-from VERSION    add: machines below this version do not take it
  --no-build            add: publish out/ as it is
  --expires DAYS        how long what is signed now stays valid
                        (default days: ${EXPIRIES})
  --root-keys N, --root-threshold N, --targets-keys N, --targets-threshold N
                        init: how many keys each role has and how many must sign (default 1 of 1)
  --threshold N         keys add/revoke: the role's threshold after the change (default: as it was)
  --new-keys DIR        keys add: where the new key is made

exit codes: 0 done; 1 refused (the message names the file, key or role); 2 bad usage; 3 failed.
`;

export interface ReleaseHost {
  /** The definition, or undefined after its problems were printed. */
  definition(file: string): Promise<ApplianceDefinition | undefined>;
  /** Builds the definition's upgrade bundle; the bundle file. */
  buildBundle(d: ApplianceDefinition, build: boolean): Promise<string>;
  signingKey(d: ApplianceDefinition): SigningKey;
}

const VALUES = ['--repo', '--keys', '-f', '--file', '--channel', '--waves', '--min-from', '--expires', '--root-keys',
  '--root-threshold', '--targets-keys', '--targets-threshold', '--threshold', '--new-keys'];
const FLAGS = ['--no-build'];

export class ReleaseUsage extends Error {}

interface Args { words: string[]; values: Map<string, string>; flags: Set<string> }

function parseArgs(argv: string[]): Args {
  const a: Args = { words: [], values: new Map(), flags: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (VALUES.includes(x)) {
      const v = argv[++i];
      if (v === undefined || v.startsWith('-')) throw new ReleaseUsage(`${x} needs a value`);
      a.values.set(x === '-f' ? '--file' : x, v);
    } else if (FLAGS.includes(x)) a.flags.add(x);
    else if (x.startsWith('-')) throw new ReleaseUsage(`"${x}": not an option of release`);
    else a.words.push(x);
  }
  return a;
}

const need = (a: Args, name: string) => {
  const v = a.values.get(name);
  if (v === undefined) throw new ReleaseUsage(`${name} is needed`);
  return v;
};
const count = (a: Args, name: string, fallback: number) => {
  const v = a.values.get(name);
  if (v === undefined) return fallback;
  if (!/^[1-9][0-9]?$/.test(v)) throw new ReleaseUsage(`${name} ${v}: a whole number from 1 to 99`);
  return Number(v);
};
const keyDirs = (a: Args) => need(a, '--keys').split(',').filter(Boolean);

function expires(a: Args, roles: readonly RoleName[]): Partial<Record<RoleName, number>> | undefined {
  const v = a.values.get('--expires');
  if (v === undefined) return undefined;
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || Number(v) <= 0) throw new ReleaseUsage(`--expires ${v}: days, more than 0`);
  return Object.fromEntries(roles.map((r) => [r, Number(v)]));
}

function printCommitted(c: Committed): void {
  for (const s of c.signed) process.stdout.write(`  signed ${s.role} version ${s.version}, expires ${s.expires}\n`);
}

function init(a: Args): void {
  const repo = need(a, '--repo');
  const dir = keyDirs(a)[0]!;
  const spec = {
    root: { n: count(a, '--root-keys', 1), threshold: count(a, '--root-threshold', 1) },
    targets: { n: count(a, '--targets-keys', 1), threshold: count(a, '--targets-threshold', 1) },
    snapshot: { n: 1, threshold: 1 },
    timestamp: { n: 1, threshold: 1 },
  };
  for (const [role, s] of Object.entries(spec)) {
    if (s.threshold > s.n) throw new ReleaseUsage(`${role}: a threshold of ${s.threshold} with ${s.n} key(s)`);
  }
  // Before any key is made: nothing is left behind by a refusal.
  refuseExistingRepository(repo);
  const made = Object.fromEntries(Object.entries(spec).map(([role, s]) => [role,
    Array.from({ length: s.n }, (_, i) => generateKeyFile(dir, s.n > 1 ? `${role}-${i + 1}` : role))]));
  const roles = Object.fromEntries(ROLES.map((r) => [r, { keys: made[r]!.map((k) => k.privateKey),
    threshold: spec[r].threshold }])) as Parameters<typeof createRepository>[1]['roles'];
  const c = createRepository(repo, { roles, ...(expires(a, ROLES) ? { expiresDays: expires(a, ROLES)! } : {}) },
    loadKeyFolders([dir]), new Date());
  process.stdout.write(`made the update repository ${repo} (consistent snapshots), keys in ${dir}:\n`);
  for (const r of ROLES) {
    process.stdout.write(`  ${r}: ${made[r]!.map((k) => `${relative(process.cwd(), k.file)} (${k.id.slice(0, 12)})`)
      .join(', ')}, threshold ${spec[r].threshold}\n`);
  }
  printCommitted(c);
  process.stdout.write(`pin its first root in appliance.yaml:\n  updates:\n    root: ${relative(process.cwd(),
    rootFile(repo, 1))}\n    url: https://updates.example.com/   # where ${repo} is served\n    channel: stable\n`
    + 'keep the root keys offline; refresh the timestamp at least daily (appliance release refresh-timestamp)\n');
}

async function add(a: Args, host: ReleaseHost): Promise<number> {
  const repo = need(a, '--repo');
  const channel = a.values.get('--channel') ?? 'stable';
  if (!CHANNEL_RE.test(channel)) throw new ReleaseUsage(`--channel ${channel}: lower-case letters, digits and -`);
  const waves = a.values.has('--waves') ? parseWaves(a.values.get('--waves')!) : [...ALL_AT_ONCE];
  if (waves instanceof Error) throw new ReleaseUsage(waves.message);
  const minFrom = a.values.get('--min-from');
  if (minFrom !== undefined && !/^[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.-]+)?$/.test(minFrom)) {
    throw new ReleaseUsage(`--min-from ${minFrom}: a version such as 1.4.0`);
  }
  const keys = loadKeyFolders(keyDirs(a));
  const d = await host.definition(a.values.get('--file') ?? 'appliance.yaml');
  if (!d) return 1;
  const file = await host.buildBundle(d, !a.flags.has('--no-build'));
  const bundle = readFileSync(file);
  // The bundle's own signature, checked as the machine will check it, before it is offered to anyone.
  const signing = host.signingKey(d);
  const { manifest } = verifyUpgradeBundle(bundle, createPublicKey(signing.privateKey));
  if (manifest.version !== d.version) {
    throw new ReleaseRefused(`${file}: version ${manifest.version}, appliance.yaml says ${d.version}: build it again`);
  }
  const c = addRelease(repo, keys, { name: d.name, version: d.version, bundle, channel, waves, now: new Date(),
    ...(minFrom ? { minFromVersion: minFrom } : {}), ...(expires(a, ['targets']) ? { expiresDays: expires(a,
      ['targets'])! } : {}) });
  process.stdout.write(`${d.name} ${d.version} ${c.promoted ? 'promoted to' : 'added to'} channel ${channel} of ${repo}`
    + ` (${(bundle.length / 1e6).toFixed(1)} MB, waves ${formatWaves(waves)}`
    + `${minFrom ? `, from ${minFrom} up` : ''})\n`);
  printCommitted(c);
  return 0;
}

function status(a: Args): void {
  const repo = need(a, '--repo');
  const v = viewRepository(repo);
  const now = Date.now();
  const left = (expires: string) => {
    const days = (Date.parse(expires) - now) / 86_400_000;
    return days < 0 ? 'EXPIRED' : days < 1 ? `${(days * 24).toFixed(1)} h left` : `${days.toFixed(1)} days left`;
  };
  const root = v.state.root.signed;
  process.stdout.write(`${repo}:\n`);
  for (const [role, md] of [['root', v.state.root], ['targets', v.state.targets], ['snapshot', v.state.snapshot],
    ['timestamp', v.state.timestamp]] as const) {
    const r = root.roles[role]!;
    const soon = role !== 'timestamp' && rolesDue(v.state, new Date()).includes(role) ? '  EXPIRES SOON: appliance '
      + `release refresh ${role}` : '';
    process.stdout.write(`  ${role.padEnd(9)} version ${md.signed.version}, expires ${md.signed.expires} `
      + `(${left(md.signed.expires)}), keys ${r.keyIDs.map((id) => id.slice(0, 12)).join(', ')}, threshold `
      + `${r.threshold}${soon}\n`);
  }
  process.stdout.write('channels:\n');
  for (const c of v.channels) {
    process.stdout.write(c.info instanceof Error ? `  ${c.name}: ${c.info.message}\n` : `  ${c.name}: `
      + `${c.info.release || 'nothing'}${c.info.paused ? ' (PAUSED)' : ''}, ${c.info.note} at ${c.info.changed}\n`);
  }
  if (!v.channels.length) process.stdout.write('  none\n');
  process.stdout.write('releases:\n');
  for (const r of v.releases) {
    process.stdout.write(r.info instanceof Error ? `  ${r.target}: ${r.info.message}\n` : `  ${r.info.name} `
      + `${r.info.version}: published ${r.info.published}, waves ${formatWaves(r.info.waves)}`
      + `${r.info.minFromVersion ? `, from ${r.info.minFromVersion} up` : ''}, ${(r.length / 1e6).toFixed(1)} MB\n`);
  }
  if (!v.releases.length) process.stdout.write('  none\n');
}

/** Signs `asked` anew, or (refresh-timestamp) the timestamp and every role near its expiry whose keys are here. */
function refresh(a: Args, asked: string[] | undefined): void {
  const repo = need(a, '--repo');
  const keys = loadKeyFolders(keyDirs(a));
  const state = readRepository(repo);
  const bad = (asked ?? []).filter((r) => !ROLES.includes(r as RoleName));
  if (asked && (!asked.length || bad.length)) {
    throw new ReleaseUsage(`refresh ROLE...: ${bad.length ? `"${bad.join(', ')}": not` : 'name'} a role (`
      + `${ROLES.join(', ')})`);
  }
  const hasKeys = (r: RoleName) => state.root.signed.roles[r]!.keyIDs.filter((id) => keys.has(id)).length
    >= state.root.signed.roles[r]!.threshold;
  const due = rolesDue(state, new Date());
  const roles = asked ? asked as RoleName[] : due.filter((r) => r === 'timestamp' || hasKeys(r));
  for (const r of due.filter((x) => !roles.includes(x))) {
    process.stderr.write(`appliance release: ${r} expires ${state[r].signed.expires}: sign it anew with its keys `
      + `(appliance release refresh ${r} --keys DIR)\n`);
  }
  const c = commitChanges(repo, keys, { resign: roles, ...(expires(a, roles) ? { expiresDays: expires(a, roles)! }
    : {}) }, new Date());
  printCommitted(c);
}

function keysCommand(a: Args): void {
  const [, verb, role, keyId] = a.words;
  if (!ROLES.includes(role as RoleName)) throw new ReleaseUsage(`keys ${verb ?? ''}: a role (${ROLES.join(', ')})`);
  const repo = need(a, '--repo');
  const dirs = keyDirs(a);
  const root = readRepository(repo).root.signed;
  const r = root.roles[role!]!;
  const current = r.keyIDs.map((id) => root.keys[id]!);
  let keysAfter = current.map(publicKeyOf);
  let made = '';
  if (verb === 'add') {
    if (keyId) throw new ReleaseUsage('keys add ROLE: the key is made, not named');
    const dir = a.values.get('--new-keys') ?? dirs[0]!;
    const n = r.keyIDs.length + 1;
    const k = generateKeyFile(dir, `${role}-${n}-${Date.now().toString(36)}`);
    keysAfter = [...keysAfter, createPublicKey(k.privateKey)];
    made = `${k.file} (${k.id.slice(0, 12)})`;
  } else if (verb === 'revoke') {
    if (!keyId) throw new ReleaseUsage('keys revoke ROLE KEYID: which key (appliance release status lists them)');
    const match = r.keyIDs.filter((id) => id.startsWith(keyId));
    if (match.length !== 1) {
      throw new ReleaseRefused(`${keyId}: ${match.length ? 'more than one' : 'no'} key of ${role}`);
    }
    keysAfter = current.filter((k) => k.keyID !== match[0]).map(publicKeyOf);
  } else throw new ReleaseUsage('keys add ROLE, or keys revoke ROLE KEYID');
  const threshold = count(a, '--threshold', Math.min(r.threshold, keysAfter.length));
  if (!keysAfter.length) throw new ReleaseRefused(`${role} would have no key left`);
  const keys = loadKeyFolders([...dirs, ...(a.values.get('--new-keys') ? [a.values.get('--new-keys')!] : [])]);
  // --expires is for the roles signed because their keys changed; the new root keeps its own validity.
  const others = ROLES.filter((r) => r !== 'root');
  const c = commitChanges(repo, keys, { roles: { [role!]: { keys: keysAfter, threshold } },
    ...(expires(a, others) ? { expiresDays: expires(a, others)! } : {}) }, new Date());
  process.stdout.write(`${role}: ${verb === 'add' ? `added ${made}` : `revoked ${keyId}`}; ${keysAfter.length} key(s), `
    + `threshold ${threshold}\n`);
  printCommitted(c);
}

/** `appliance release ...`: the exit code. */
export async function releaseMain(argv: string[], host: ReleaseHost): Promise<number> {
  if (!argv.length || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(RELEASE_HELP);
    return argv.length ? 0 : 2;
  }
  try {
    const a = parseArgs(argv);
    const action = a.words[0];
    const extra = (n: number) => {
      if (a.words.length > n) throw new ReleaseUsage(`"${a.words[n]}": ${action} takes no more words`);
    };
    if (action === 'init') {
      extra(1);
      init(a);
    } else if (action === 'add') {
      extra(1);
      return await add(a, host);
    } else if (action === 'status') {
      extra(1);
      status(a);
    } else if (action === 'pause' || action === 'resume') {
      extra(1);
      const channel = a.values.get('--channel') ?? 'stable';
      const c = setPaused(need(a, '--repo'), loadKeyFolders(keyDirs(a)), channel, action === 'pause', new Date());
      process.stdout.write(`channel ${channel}: ${action === 'pause' ? 'paused' : 'resumed'}\n`);
      printCommitted(c);
    } else if (action === 'withdraw') {
      extra(2);
      const version = a.words[1];
      if (!version) throw new ReleaseUsage('withdraw VERSION: which version');
      const d = await host.definition(a.values.get('--file') ?? 'appliance.yaml');
      if (!d) return 1;
      const c = withdrawRelease(need(a, '--repo'), loadKeyFolders(keyDirs(a)), d.name, version, new Date());
      process.stdout.write(`${d.name} ${version} withdrawn${c.channels.map((x) => `; ${x.channel} now offers ${x.now}`)
        .join('')}\n`);
      printCommitted(c);
    } else if (action === 'refresh-timestamp' || action === 'refresh') {
      refresh(a, action === 'refresh' ? a.words.slice(1) : undefined);
    } else if (action === 'keys') {
      keysCommand(a);
    } else {
      throw new ReleaseUsage(`"${action ?? ''}": not an action (init, add, status, pause, resume, withdraw, `
        + 'refresh-timestamp, refresh, keys)');
    }
    return 0;
  } catch (e) {
    if (e instanceof ReleaseUsage) {
      process.stderr.write(`appliance release: ${e.message} (appliance release --help)\n`);
      return 2;
    }
    if (e instanceof ReleaseRefused || e instanceof UpgradeBundleError) {
      process.stderr.write(`appliance release: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  }
}
