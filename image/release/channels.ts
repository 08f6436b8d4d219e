// channels: what a publisher does to an update repository, in its own words: add a release to a channel (the bundle
// as a release target, the channel's target pointing at it), pause and resume a channel's rollout, withdraw a
// release (its target gone, each channel that offered it back to the release it offered before). Each is one
// commit of the repository (tuf-repository.ts): a new targets version, snapshot and timestamp.
import { createHash } from 'node:crypto';
import {
  channelTarget, parseChannelInfo, parseReleaseInfo, releaseTarget, type ChannelInfo, type ReleaseInfo,
} from '../../machinery/update/release-meta.ts';
import type { Wave } from '../../machinery/update/waves.ts';
import { compareVersions } from '../../machinery/update/versions.ts';
import { ReleaseRefused, type SigningKeyFile } from './tuf-keys.ts';
import { commitChanges, readRepository, tufTime, type Committed, type RepositoryState } from './tuf-repository.ts';

type Json = Record<string, unknown>;

/**
 * A channel's file and custom metadata: what it offers, what it offered before (for withdrawals), and since when a
 * pause began (a resume moves `since` on by the pause).
 */
interface ChannelRecord extends ChannelInfo { history: string[]; pausedAt?: string }

export interface RepositoryView {
  releases: { target: string; info: ReleaseInfo | Error; length: number; sha256: string }[];
  channels: { name: string; info: ChannelInfo | Error }[];
  state: RepositoryState;
}

/** The releases and channels the repository's current targets hold. */
export function viewRepository(repo: string): RepositoryView {
  const state = readRepository(repo);
  const releases: RepositoryView['releases'] = [];
  const channels: RepositoryView['channels'] = [];
  for (const [path, t] of Object.entries(state.targets.signed.targets)) {
    const m = /^channels\/(.+)\.json$/.exec(path);
    if (m) channels.push({ name: m[1]!, info: parseChannelInfo(t.custom, path) });
    else if (path.startsWith('releases/')) {
      releases.push({ target: path, info: parseReleaseInfo(t.custom, path), length: t.length,
        sha256: t.hashes.sha256 ?? '' });
    }
  }
  return { releases, channels, state };
}

function channelRecord(state: RepositoryState, channel: string): ChannelRecord | undefined {
  const t = state.targets.signed.targets[channelTarget(channel)];
  if (!t) return undefined;
  const info = parseChannelInfo(t.custom, channelTarget(channel));
  if (info instanceof Error) throw new ReleaseRefused(info.message);
  const history = Array.isArray(t.custom.history) ? (t.custom.history as unknown[]).filter((h) => typeof h === 'string')
    : [];
  const pausedAt = typeof t.custom.pausedAt === 'string' ? t.custom.pausedAt : undefined;
  return { ...info, history: history as string[], ...(pausedAt ? { pausedAt } : {}) };
}

/** The channel's target: the record is both its file (so the target has bytes to hash) and its custom metadata. */
function channelPut(channel: string, r: ChannelRecord) {
  const custom: Json = { release: r.release, paused: r.paused, changed: r.changed, note: r.note, history: r.history,
    ...(r.since ? { since: r.since } : {}), ...(r.pausedAt ? { pausedAt: r.pausedAt } : {}) };
  return { path: channelTarget(channel), data: Buffer.from(`${JSON.stringify(custom, null, 2)}\n`), custom };
}

export interface AddRelease {
  name: string;
  version: string;
  bundle: Uint8Array;
  channel: string;
  waves: readonly Wave[];
  minFromVersion?: string;
  now: Date;
  expiresDays?: Partial<Record<'targets' | 'snapshot' | 'timestamp', number>>;
}

/**
 * Adds a release to a channel. A version already in the repository with the same bytes is only offered on the channel
 * (a promotion from beta to stable); with other bytes it is refused (a version names one bundle forever). A channel
 * that offers a higher version is refused too: machines never go down by themselves.
 */
export function addRelease(repo: string, keys: Map<string, SigningKeyFile>, a: AddRelease): Committed & {
  target: string; promoted: boolean;
} {
  const { state } = viewRepository(repo);
  const target = releaseTarget(a.name, a.version);
  const existing = state.targets.signed.targets[target];
  const put = [];
  if (existing) {
    const hash = createHash('sha256').update(a.bundle).digest('hex');
    if (existing.hashes.sha256 !== hash) {
      throw new ReleaseRefused(`${target}: the repository holds version ${a.version} with other bytes (sha256 `
        + `${existing.hashes.sha256?.slice(0, 12)}); a version names one bundle: build a new version`);
    }
  } else {
    const custom: ReleaseInfo = { name: a.name, version: a.version, published: tufTime(a.now), waves: [...a.waves],
      ...(a.minFromVersion ? { minFromVersion: a.minFromVersion } : {}) };
    put.push({ path: target, data: a.bundle, custom: custom as unknown as Json });
  }
  const before = channelRecord(state, a.channel);
  if (before?.release === target) throw new ReleaseRefused(`channel ${a.channel} already offers ${a.version}`);
  const offered = before?.release ? state.targets.signed.targets[before.release]?.custom.version : undefined;
  if (typeof offered === 'string' && compareVersions(offered, a.version) > 0) {
    throw new ReleaseRefused(`channel ${a.channel} offers ${offered}, higher than ${a.version}: machines take only `
      + 'higher versions (withdraw the higher one first)');
  }
  const record: ChannelRecord = { release: target, paused: false, changed: tufTime(a.now), since: tufTime(a.now),
    note: existing ? `promoted ${a.version}` : `added ${a.version}`,
    history: [...(before?.history ?? []), ...(before?.release ? [before.release] : [])] };
  put.push(channelPut(a.channel, record));
  const c = commitChanges(repo, keys, { put, ...(a.expiresDays ? { expiresDays: a.expiresDays } : {}) }, a.now);
  return { ...c, target, promoted: Boolean(existing) };
}

/** Pauses or resumes a channel's rollout. */
export function setPaused(repo: string, keys: Map<string, SigningKeyFile>, channel: string, paused: boolean,
  now: Date): Committed {
  const state = readRepository(repo);
  const r = channelRecord(state, channel);
  if (!r) throw new ReleaseRefused(`no channel ${channel} in the repository`);
  if (r.paused === paused) throw new ReleaseRefused(`channel ${channel} is already ${paused ? 'paused' : 'running'}`);
  const { pausedAt: _, ...rest } = r;
  // Resumed: the waves go on where they stood when paused (none opened during the pause).
  const since = !paused && r.pausedAt && r.since
    ? tufTime(new Date(Date.parse(r.since) + now.getTime() - Date.parse(r.pausedAt))) : r.since;
  const record = { ...rest, paused, changed: tufTime(now), note: paused ? 'paused' : 'resumed',
    ...(since ? { since } : {}), ...(paused ? { pausedAt: tufTime(now) } : {}) };
  return commitChanges(repo, keys, { put: [channelPut(channel, record)] }, now);
}

/**
 * Withdraws a version: its release target leaves the repository (machines can no longer fetch it through TUF) and
 * each channel offering it goes back to the newest release it offered before that is still there (or none).
 */
export function withdrawRelease(repo: string, keys: Map<string, SigningKeyFile>, name: string, version: string,
  now: Date): Committed & { channels: { channel: string; now: string }[] } {
  const view = viewRepository(repo);
  const target = releaseTarget(name, version);
  if (!view.state.targets.signed.targets[target]) throw new ReleaseRefused(`${target}: not in the repository`);
  const remaining = new Set(view.releases.map((r) => r.target).filter((t) => t !== target));
  const put = [];
  const moved: { channel: string; now: string }[] = [];
  for (const c of view.channels) {
    const r = channelRecord(view.state, c.name)!;
    const history = r.history.filter((h) => h !== target && remaining.has(h));
    if (r.release !== target && history.length === r.history.length) continue;
    const release = r.release === target ? history.pop() ?? '' : r.release;
    put.push(channelPut(c.name, { ...r, release, history, changed: tufTime(now), note: `withdrew ${version}`,
      ...(r.release === target ? { since: tufTime(now) } : {}) }));
    moved.push({ channel: c.name, now: release || 'nothing' });
  }
  return { ...commitChanges(repo, keys, { put, remove: [target] }, now), channels: moved };
}
