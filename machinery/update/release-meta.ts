// release-meta: what an update repository says beyond TUF's own fields, in its targets' custom metadata. Two kinds
// of target: a release (the upgrade bundle, `releases/NAME-VERSION.tar`: its version, when it was published, its
// wave schedule, the lowest version it may be installed over) and a channel (`channels/CHANNEL.json`: which release
// the channel offers and whether its rollout is paused). A machine reads its channel's target, then the release it
// names: both signed by the targets role, so pausing or withdrawing a release is a new targets version like any
// other change. The publisher writes these (image/release/) and the machine reads them (init/upgrade/); one module
// so the two cannot disagree.
import { scheduleProblems, type Wave } from './waves.ts';

export const CHANNEL_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
const VERSION_RE = /^[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.-]+)?$/;

export const channelTarget = (channel: string) => `channels/${channel}.json`;
export const releaseTarget = (name: string, version: string) => `releases/${name}-${version}.tar`;

export interface ReleaseInfo {
  /** The appliance's name and version, as its bundle's manifest has them. */
  name: string;
  version: string;
  /** When the release was added to the repository (ISO 8601): its waves count from here. */
  published: string;
  waves: Wave[];
  /** Machines running a lower version do not take it (they need an intermediate release first). */
  minFromVersion?: string;
}

export interface ChannelInfo {
  /** The release target the channel offers; empty: none (withdrawn with nothing before it). */
  release: string;
  /** The rollout is paused: machines that have not taken the release wait. */
  paused: boolean;
  /** When the channel last changed, and why (the publisher's words: "added 1.2.0", "paused"). */
  changed: string;
  note: string;
  /**
   * When the channel began offering its release, moved on by the time it was paused: the waves count from here, so a
   * release promoted from beta days later, or resumed after a pause, does not reach every wave at once.
   */
  since?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** A release's custom metadata checked whole: every problem names its field. */
export function parseReleaseInfo(custom: unknown, target: string): ReleaseInfo | Error {
  if (!isObject(custom)) return new Error(`${target}: no custom metadata (version, published, waves)`);
  const problems: string[] = [];
  const { name, version, published, waves, minFromVersion } = custom;
  if (typeof name !== 'string' || !name) problems.push('name: a string');
  if (typeof version !== 'string' || !VERSION_RE.test(version)) problems.push(`version ${JSON.stringify(version)}`);
  if (!isTime(published)) problems.push(`published ${JSON.stringify(published)}: an ISO 8601 time`);
  if (minFromVersion !== undefined && (typeof minFromVersion !== 'string' || !VERSION_RE.test(minFromVersion))) {
    problems.push(`minFromVersion ${JSON.stringify(minFromVersion)}`);
  }
  const list = Array.isArray(waves) ? waves : [];
  if (!Array.isArray(waves)) problems.push('waves: a list of {after, percent}');
  const parsed = list.map((w: unknown) => (isObject(w) ? { after: w.after, percent: w.percent } : {}) as Wave);
  problems.push(...(Array.isArray(waves) ? scheduleProblems(parsed).map((p) => `waves: ${p}`) : []));
  if (problems.length) return new Error(`${target}: custom metadata: ${problems.join('; ')}`);
  return {
    name: name as string, version: version as string, published: published as string, waves: parsed,
    ...(minFromVersion ? { minFromVersion: minFromVersion as string } : {}),
  };
}

/** A channel's custom metadata checked whole. */
export function parseChannelInfo(custom: unknown, target: string): ChannelInfo | Error {
  if (!isObject(custom)) return new Error(`${target}: no custom metadata (release, paused)`);
  const { release, paused, changed, note, since } = custom;
  const problems: string[] = [];
  if (typeof release !== 'string' || (release && !release.startsWith('releases/'))) {
    problems.push(`release ${JSON.stringify(release)}: a releases/ target or empty`);
  }
  if (typeof paused !== 'boolean') problems.push('paused: true or false');
  if (!isTime(changed)) problems.push(`changed ${JSON.stringify(changed)}: an ISO 8601 time`);
  if (since !== undefined && !isTime(since)) problems.push(`since ${JSON.stringify(since)}: an ISO 8601 time`);
  if (problems.length) return new Error(`${target}: custom metadata: ${problems.join('; ')}`);
  return { release: release as string, paused: paused as boolean, changed: changed as string,
    note: typeof note === 'string' ? note : '', ...(since ? { since: since as string } : {}) };
}
