// update-decision: what a machine does with what its update repository offers, decided from facts alone (no I/O):
// the release its channel names, whether the channel is paused, the versions that failed here, its seed's wave,
// the maintenance window, the mode. One reason per outcome, in the words UpdateStatus shows.
import type { ChannelInfo, ReleaseInfo } from '../../machinery/update/release-meta.ts';
import { compareVersions } from '../../machinery/update/versions.ts';
import { waveTime } from '../../machinery/update/waves.ts';

export interface UpdateFacts {
  running: string;
  channel: string;
  /** The channel's target (undefined: the repository has no such channel). */
  offered?: { channel: ChannelInfo; release?: ReleaseInfo };
  failedVersions: readonly string[];
  seed: number;
  now: Date;
  /** HH:MM-HH:MM in UTC, or empty. */
  window: string;
  mode: 'auto' | 'notify';
}

export type UpdateDecision =
  | { act: false; state: 'up-to-date' | 'waiting' | 'available'; reason: string; wave?: WaveFacts;
    /** When to look again for this reason (a wave or the window opens): sooner than the next poll, maybe. */
    wake?: Date }
  | { act: true; reason: string; wave: WaveFacts; release: ReleaseInfo };

export interface WaveFacts { wave: number; opens: Date }

const hhmm = (d: Date) => d.getUTCHours() * 60 + d.getUTCMinutes();
const minutes = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3, 5));

/** The start of the next opening of `window` at or after `now` (now itself when inside it); null: always open. */
export function windowOpens(window: string, now: Date): Date | null {
  if (!window) return null;
  const [from, to] = window.split('-') as [string, string];
  const start = minutes(from);
  const end = minutes(to);
  const m = hhmm(now);
  const inside = start <= end ? m >= start && m < end : m >= start || m < end;
  if (inside || start === end) return now;
  const next = new Date(now);
  next.setUTCHours(Math.floor(start / 60), start % 60, 0, 0);
  if (next <= now) next.setUTCDate(next.getUTCDate() + 1);
  return next;
}

export function decideUpdate(f: UpdateFacts): UpdateDecision {
  if (!f.offered) return { act: false, state: 'up-to-date', reason: `the repository has no channel ${f.channel}` };
  const { channel, release } = f.offered;
  if (!channel.release || !release) {
    return { act: false, state: 'up-to-date', reason: `channel ${f.channel} offers nothing` };
  }
  if (compareVersions(release.version, f.running) <= 0) {
    return { act: false, state: 'up-to-date',
      reason: `${f.running} runs; channel ${f.channel} offers ${release.version}` };
  }
  if (f.failedVersions.includes(release.version)) {
    return { act: false, state: 'waiting', reason: `${release.version} failed its try on this machine: not tried again `
      + '(cosictl upgrade takes it by hand)' };
  }
  if (release.minFromVersion && compareVersions(f.running, release.minFromVersion) < 0) {
    return { act: false, state: 'waiting', reason: `${release.version} is installed over ${release.minFromVersion} or `
      + `later; ${f.running} runs: an intermediate release first` };
  }
  const w = waveTime(release.waves, f.seed);
  // From when the channel began offering it (a promotion, a pause moved on), else its publication.
  const start = Date.parse(channel.since ?? release.published);
  const wave = { wave: w.wave, opens: new Date(start + w.after * 1000) };
  if (channel.paused) {
    return { act: false, state: 'waiting',
      reason: `channel ${f.channel} is paused (${channel.note} at ${channel.changed})`, wave };
  }
  if (f.mode === 'notify') {
    return { act: false, state: 'available', reason: `${release.version} is offered; the policy says notify only`,
      wave };
  }
  if (wave.opens > f.now) {
    return { act: false, state: 'waiting', reason: `wave ${w.wave} (seed ${f.seed}) takes ${release.version} from `
      + `${wave.opens.toISOString()}`, wave, wake: wave.opens };
  }
  const opens = windowOpens(f.window, f.now);
  if (opens && opens > f.now) {
    return { act: false, state: 'waiting', reason: `outside the maintenance window ${f.window} UTC (opens `
      + `${opens.toISOString()})`, wave, wake: opens };
  }
  return { act: true, reason: `upgrading to ${release.version} (wave ${w.wave})`, wave, release };
}
