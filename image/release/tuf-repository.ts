// tuf-repository: an update repository's files, written as TUF says (the specification's "repository" workflow),
// with @tufjs/models for the metadata classes, their canonical JSON and their signatures. The folder is what any
// HTTP server, bucket or CDN serves as it is:
//   metadata/N.root.json          every root version (a machine walks from the root it trusts to the newest)
//   metadata/N.targets.json       targets: each release bundle and channel file, its length, sha256, custom metadata
//   metadata/N.snapshot.json      snapshot: the targets version in force
//   metadata/timestamp.json       timestamp: the snapshot in force; short-lived, refreshed by a scheduled job
//   targets/DIR/SHA256.NAME       the target files, named by their hash (consistent snapshots)
// Every file but timestamp.json is new with each change and none is ever rewritten, and timestamp.json is replaced
// last (rename), so a machine polling while a release is published sees the old repository or the new one whole.
// What the library does not do, done here: choosing versions and expiries, signing with enough keys (a refusal
// names the role, the keys found and the threshold), root rotation signed by the old and the new root's keys.
import { createHash, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { canonicalize } from '@tufjs/canonical-json';
import { Metadata, MetadataKind, MetaFile, Root, Snapshot, TargetFile, Targets, Timestamp } from '@tufjs/models';
import { ReleaseRefused, signerOf, tufKeyOf, type SigningKeyFile } from './tuf-keys.ts';

export const ROLES = ['root', 'targets', 'snapshot', 'timestamp'] as const;
export type RoleName = (typeof ROLES)[number];

/** How long each role's metadata is valid when signed, in days, unless told otherwise. */
// The timestamp outlives a daily refresh job twice over: a late run does not stop a fleet.
export const DEFAULT_EXPIRY_DAYS: Record<RoleName, number> = { root: 365, targets: 90, snapshot: 30, timestamp: 3 };
const SPEC_VERSION = '1.0.31';

type Json = Record<string, unknown>;
type AnyMetadata = Metadata<Root> | Metadata<Targets> | Metadata<Snapshot> | Metadata<Timestamp>;

/** TUF's time format: no fractions. */
export const tufTime = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;
const expiry = (now: Date, days: number) => tufTime(new Date(now.getTime() + days * 86_400_000));
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** The bytes a metadata file holds: canonical JSON, as signed. */
const bytesOf = (md: AnyMetadata) => Buffer.from(canonicalize(md.toJSON()));

function readJson(file: string): Json {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (e) {
    throw new ReleaseRefused(`${file}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Writes each file whole or not at all: a reader never sees half of one. Every file but timestamp.json is written once:
 * a versioned file or a target already there with other bytes means another publish wrote it (machines may have
 * trusted it), so it is refused rather than replaced.
 */
function writeAll(writes: readonly { file: string; data: Uint8Array }[]): void {
  const once = writes.filter((w) => basename(w.file) !== 'timestamp.json' && existsSync(w.file));
  for (const w of once) {
    if (Buffer.compare(readFileSync(w.file), w.data) !== 0) {
      throw new ReleaseRefused(`${w.file} exists with other bytes: another publish wrote it; nothing was written`);
    }
  }
  for (const w of writes) {
    if (once.includes(w)) continue;
    mkdirSync(dirname(w.file), { recursive: true });
    writeFileSync(`${w.file}.tmp`, w.data);
    renameSync(`${w.file}.tmp`, w.file);
  }
}

/** Runs `work` holding the repository's lock (metadata/.lock, with the holder's pid): one publish at a time. */
function locked<T>(repo: string, work: () => T): T {
  const lock = join(metadataDir(repo), '.lock');
  mkdirSync(metadataDir(repo), { recursive: true });
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 0) throw e;
      const pid = Number(readFileSync(lock, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
        throw new ReleaseRefused(`${repo}: another publish (pid ${pid}) holds ${lock}; try again when it is done`);
      }
      // Its holder is gone (killed mid-publish): what it wrote is whole files only, so the lock is taken over.
      rmSync(lock, { force: true });
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The roles whose metadata expires within a third of its default validity (the timestamp always): what a scheduled
 * refresh signs anew, so that nothing expires for want of a change.
 */
export function rolesDue(s: RepositoryState, now: Date): RoleName[] {
  const left = (expires: string) => Date.parse(expires) - now.getTime();
  const due = (role: RoleName, expires: string) => left(expires) < (DEFAULT_EXPIRY_DAYS[role] * 86_400_000) / 3;
  return [
    ...due('root', s.root.signed.expires) ? ['root' as const] : [],
    ...due('targets', s.targets.signed.expires) ? ['targets' as const] : [],
    ...due('snapshot', s.snapshot.signed.expires) ? ['snapshot' as const] : [],
    'timestamp',
  ];
}

export interface RepositoryState {
  root: Metadata<Root>;
  targets: Metadata<Targets>;
  snapshot: Metadata<Snapshot>;
  timestamp: Metadata<Timestamp>;
}

export const metadataDir = (repo: string) => join(repo, 'metadata');
export const rootFile = (repo: string, version: number) => join(metadataDir(repo), `${version}.root.json`);

/** The newest root version in the folder. */
function newestRoot(repo: string): number {
  const dir = metadataDir(repo);
  if (!existsSync(dir)) {
    throw new ReleaseRefused(`${repo}: not an update repository (no metadata/; appliance release init)`);
  }
  const versions = readdirSync(dir).map((n) => /^([0-9]+)\.root\.json$/.exec(n)?.[1]).filter(Boolean).map(Number);
  if (!versions.length) throw new ReleaseRefused(`${dir}: no N.root.json`);
  return Math.max(...versions);
}

/** The repository as it is served now: the newest root, the timestamp and what it points to. */
export function readRepository(repo: string): RepositoryState {
  const dir = metadataDir(repo);
  const root = Metadata.fromJSON(MetadataKind.Root, readJson(rootFile(repo, newestRoot(repo))) as never);
  const timestamp = Metadata.fromJSON(MetadataKind.Timestamp, readJson(join(dir, 'timestamp.json')) as never);
  const snapshot = Metadata.fromJSON(MetadataKind.Snapshot,
    readJson(join(dir, `${timestamp.signed.snapshotMeta.version}.snapshot.json`)) as never);
  const targetsMeta = snapshot.signed.meta['targets.json'];
  if (!targetsMeta) throw new ReleaseRefused(`${dir}: the snapshot names no targets.json`);
  const targets = Metadata.fromJSON(MetadataKind.Targets,
    readJson(join(dir, `${targetsMeta.version}.targets.json`)) as never);
  return { root, targets, snapshot, timestamp };
}

/** Where a target's file is kept: its folder, then its sha256 and name, as a machine asks for it. */
export const targetFilePath = (repo: string, target: string, hash: string) =>
  join(repo, 'targets', dirname(target), `${hash}.${basename(target)}`);

export interface Changes {
  /** Targets to add or replace: the file's bytes and its custom metadata. */
  put?: { path: string; data: Uint8Array; custom: Json }[];
  /** Targets to drop (their files stay: a machine mid-download finishes). */
  remove?: string[];
  /** Root changes: keys of roles replaced, thresholds. */
  roles?: Partial<Record<RoleName, { keys: KeyObject[]; threshold: number }>>;
  /** Sign this role anew even when nothing in it changed (timestamp refresh; a role's new keys). */
  resign?: RoleName[];
  /** Days each role signed now is valid (default DEFAULT_EXPIRY_DAYS). */
  expiresDays?: Partial<Record<RoleName, number>>;
}

export interface Committed {
  /** The roles signed, with their new version and expiry. */
  signed: { role: RoleName; version: number; expires: string }[];
  files: string[];
}

/** Signs `md` with the role's keys among `keys`, refusing when fewer than its threshold are here. */
function signRole(md: AnyMetadata, role: RoleName, root: Root, keys: Map<string, SigningKeyFile>, what: string): void {
  const r = root.roles[role]!;
  const have = r.keyIDs.filter((id) => keys.has(id));
  if (have.length < r.threshold) {
    throw new ReleaseRefused(`${what}: ${role} needs ${r.threshold} signature(s) of its keys `
      + `(${r.keyIDs.map((id) => id.slice(0, 12)).join(', ')}); the key folders hold ${have.length}`);
  }
  for (const id of have) md.sign(signerOf(keys.get(id)!), true);
}

/** A root with the role changes applied (its keys list pruned to the keys roles use). */
function changedRoot(old: Root, roles: NonNullable<Changes['roles']>, version: number, expires: string): Root {
  const json = old.toJSON() as Json & { roles: Record<string, Json>; keys: Record<string, Json> };
  const keys = { ...json.keys };
  const roleJson = { ...json.roles };
  for (const [name, change] of Object.entries(roles)) {
    const tuf = change.keys.map((k) => tufKeyOf(k));
    if (change.threshold < 1 || change.threshold > tuf.length) {
      throw new ReleaseRefused(`${name}: a threshold of ${change.threshold} with ${tuf.length} key(s)`);
    }
    for (const k of tuf) keys[k.keyID] = k.toJSON();
    roleJson[name] = { keyids: tuf.map((k) => k.keyID), threshold: change.threshold };
  }
  const used = new Set(Object.values(roleJson).flatMap((r) => (r as { keyids: string[] }).keyids));
  const kept = Object.fromEntries(Object.entries(keys).filter(([id]) => used.has(id)));
  return Root.fromJSON({ ...json, version, expires, keys: kept, roles: roleJson } as never);
}

/** What a change starts from: the repository as served, or for a new one a blank (root version 0, no targets). */
interface Base {
  root: Root;
  /** Absent for a new repository: root version 1 is signed by its own keys only. */
  signedRoot?: Metadata<Root>;
  targets: Targets;
  snapshotVersion: number;
  timestampVersion: number;
}

const baseOf = (s: RepositoryState): Base => ({ root: s.root.signed, signedRoot: s.root, targets: s.targets.signed,
  snapshotVersion: s.snapshot.signed.version, timestampVersion: s.timestamp.signed.version });

/**
 * Applies `changes` to the repository and signs what they touch, with every role that depends on it: targets, then
 * snapshot, then timestamp (and a new root first when roles change). Nothing is written unless every role signs.
 */
function apply(repo: string, base: Base, keys: Map<string, SigningKeyFile>, changes: Changes, now: Date): Committed {
  const days = (r: RoleName) => changes.expiresDays?.[r] ?? DEFAULT_EXPIRY_DAYS[r];
  const touched = new Set<RoleName>(changes.resign ?? []);
  const writes: { file: string; data: Uint8Array }[] = [];
  const signed: Committed['signed'] = [];

  let root = base.root;
  if (changes.roles && Object.keys(changes.roles).length || touched.has('root')) {
    const version = root.version + 1;
    const next = new Metadata(changedRoot(root, changes.roles ?? {}, version, expiry(now, days('root'))));
    // TUF 5.3.4: a new root is signed by a threshold of the old root's keys and a threshold of its own.
    if (base.signedRoot) signRole(next, 'root', root, keys, `root version ${version} (the old root's keys)`);
    signRole(next, 'root', next.signed, keys, `root version ${version} (its own keys)`);
    for (const role of ['targets', 'snapshot', 'timestamp'] as const) {
      if (canonicalize(next.signed.roles[role]!.toJSON()) !== canonicalize(root.roles[role]?.toJSON() ?? {})) {
        touched.add(role);
      }
    }
    writes.push({ file: rootFile(repo, version), data: bytesOf(next) });
    signed.push({ role: 'root', version, expires: next.signed.expires });
    root = next.signed;
  }

  let targets = base.targets;
  let targetsBytes: Buffer | undefined;
  if (changes.put?.length || changes.remove?.length || touched.has('targets')) {
    const list = { ...(targets.toJSON() as { targets: Record<string, Json> }).targets };
    for (const path of changes.remove ?? []) {
      if (!list[path]) throw new ReleaseRefused(`${path}: not a target of the repository`);
      delete list[path];
    }
    for (const p of changes.put ?? []) {
      const hash = sha256(p.data);
      list[p.path] = new TargetFile({ path: p.path, length: p.data.length, hashes: { sha256: hash },
        unrecognizedFields: { custom: p.custom as never } }).toJSON();
      writes.push({ file: targetFilePath(repo, p.path, hash), data: p.data });
    }
    const version = targets.version + 1;
    const md = new Metadata(Targets.fromJSON({ ...targets.toJSON(), version, expires: expiry(now, days('targets')),
      targets: list } as never));
    signRole(md, 'targets', root, keys, `targets version ${version}`);
    targetsBytes = bytesOf(md);
    writes.push({ file: join(metadataDir(repo), `${version}.targets.json`), data: targetsBytes });
    signed.push({ role: 'targets', version, expires: md.signed.expires });
    targets = md.signed;
    touched.add('snapshot');
  }

  let snapshot: { version: number; bytes: Buffer } | undefined;
  if (touched.has('snapshot')) {
    const version = base.snapshotVersion + 1;
    targetsBytes ??= readFileSync(join(metadataDir(repo), `${targets.version}.targets.json`));
    const md = new Metadata(new Snapshot({ version, specVersion: SPEC_VERSION, expires: expiry(now, days('snapshot')),
      meta: { 'targets.json': new MetaFile({ version: targets.version, length: targetsBytes.length,
        hashes: { sha256: sha256(targetsBytes) } }) } }));
    signRole(md, 'snapshot', root, keys, `snapshot version ${version}`);
    snapshot = { version, bytes: bytesOf(md) };
    writes.push({ file: join(metadataDir(repo), `${version}.snapshot.json`), data: snapshot.bytes });
    signed.push({ role: 'snapshot', version, expires: md.signed.expires });
    touched.add('timestamp');
  }

  if (touched.has('timestamp')) {
    const version = base.timestampVersion + 1;
    snapshot ??= { version: base.snapshotVersion,
      bytes: readFileSync(join(metadataDir(repo), `${base.snapshotVersion}.snapshot.json`)) };
    const md = new Metadata(new Timestamp({ version, specVersion: SPEC_VERSION,
      expires: expiry(now, days('timestamp')), snapshotMeta: new MetaFile({ version: snapshot.version,
        length: snapshot.bytes.length, hashes: { sha256: sha256(snapshot.bytes) } }) }));
    signRole(md, 'timestamp', root, keys, `timestamp version ${version}`);
    // Last: until it is replaced, machines see the repository as it was.
    writes.push({ file: join(metadataDir(repo), 'timestamp.json'), data: bytesOf(md) });
    signed.push({ role: 'timestamp', version, expires: md.signed.expires });
  }
  writeAll(writes);
  return { signed, files: writes.map((w) => w.file) };
}

/** Applies `changes` to the repository in `repo` (see apply). */
export function commitChanges(repo: string, keys: Map<string, SigningKeyFile>, changes: Changes, now: Date):
  Committed {
  return locked(repo, () => apply(repo, baseOf(readRepository(repo)), keys, changes, now));
}

export interface NewRepository {
  /** Keys per role with each role's threshold. */
  roles: Record<RoleName, { keys: KeyObject[]; threshold: number }>;
  expiresDays?: Partial<Record<RoleName, number>>;
}

/** Refuses a folder that already holds a repository (its metadata/, whole or not): one is never made over another. */
export function refuseExistingRepository(repo: string): void {
  if (existsSync(metadataDir(repo))) throw new ReleaseRefused(`${repo}: already holds an update repository`);
}

/** A new repository in an empty (or missing) folder: version 1 of each role, no targets. */
export function createRepository(repo: string, n: NewRepository, keys: Map<string, SigningKeyFile>, now: Date):
  Committed {
  refuseExistingRepository(repo);
  // Version 0, never written: its roles have no keys, so version 1 is signed by its own keys only.
  const blank = new Root({ version: 0, specVersion: SPEC_VERSION, expires: tufTime(now), consistentSnapshot: true });
  const targets = new Targets({ version: 0, specVersion: SPEC_VERSION, expires: tufTime(now), targets: {} });
  return locked(repo, () => apply(repo, { root: blank, targets, snapshotVersion: 0, timestampVersion: 0 }, keys,
    { roles: n.roles, resign: ['targets'], ...(n.expiresDays ? { expiresDays: n.expiresDays } : {}) }, now));
}
