// waves: when a machine takes a release, from the release's wave schedule and the machine's own seed. As in
// Bottlerocket, a machine's seed is a number below SEED_RANGE it keeps for life (random at its first poll, or an
// UpdatePolicy's), so the same machines go first in every rollout (canaries stay canaries). A schedule is a list
// of waves, each `after` seconds from the release's publication taking machines up to `percent` of the seed range;
// inside a wave the machines are spread evenly until the next wave opens, so a wave is not one thundering herd.
// The last wave holds 100%: every machine has a time.

export const SEED_RANGE = 2048;

export interface Wave {
  /** Seconds after the release was published when this wave opens. */
  after: number;
  /** The share of the fleet (by seed) that has upgraded once this wave is through, 1-100. */
  percent: number;
}

/** Everyone at once: the schedule of a release published without one. */
export const ALL_AT_ONCE: readonly Wave[] = [{ after: 0, percent: 100 }];

/** What is wrong with a schedule, each problem naming its wave; empty when it is usable. */
export function scheduleProblems(waves: readonly Wave[]): string[] {
  const problems: string[] = [];
  if (!waves.length) return ['no waves: at least one, the last at 100%'];
  waves.forEach((w, i) => {
    if (!Number.isInteger(w.after) || w.after < 0) problems.push(`wave ${i + 1}: after ${w.after}: whole seconds >= 0`);
    if (!Number.isInteger(w.percent) || w.percent < 1 || w.percent > 100) {
      problems.push(`wave ${i + 1}: percent ${w.percent}: a whole number 1-100`);
    }
    const prev = waves[i - 1];
    if (prev && !(w.after > prev.after && w.percent > prev.percent)) {
      problems.push(`wave ${i + 1}: opens after and takes more than wave ${i} (${prev.after} s, ${prev.percent}%)`);
    }
  });
  if (waves[waves.length - 1]!.percent !== 100) problems.push('the last wave must take 100% of the fleet');
  return problems;
}

/** The seeds a wave ends below: percent of the range, rounded up so 1% of 2048 is not nothing. */
const bound = (percent: number) => Math.ceil((percent * SEED_RANGE) / 100);

export interface WaveTime {
  /** The wave the seed is in, from 0. */
  wave: number;
  /** Seconds after publication when this machine may take the release. */
  after: number;
}

/** When a machine of `seed` takes a release with this schedule (a checked one: scheduleProblems empty). */
export function waveTime(waves: readonly Wave[], seed: number): WaveTime {
  if (!Number.isInteger(seed) || seed < 0 || seed >= SEED_RANGE) {
    throw new RangeError(`seed ${seed}: a whole number from 0 to ${SEED_RANGE - 1}`);
  }
  let low = 0;
  for (let i = 0; i < waves.length; i++) {
    const w = waves[i]!;
    const high = bound(w.percent);
    if (seed < high) {
      const next = waves[i + 1];
      // Spread across the time to the next wave; the last wave's machines all go when it opens.
      const spread = next ? ((seed - low) / (high - low)) * (next.after - w.after) : 0;
      return { wave: i, after: w.after + Math.floor(spread) };
    }
    low = high;
  }
  throw new RangeError(`seed ${seed} is in no wave: the last wave must take 100%`);
}

/** Parses `0h=10%,6h=50%,1d=100%` (s, m, h, d; the percent sign optional). */
export function parseWaves(text: string): Wave[] | Error {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
  const waves: Wave[] = [];
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([0-9]+)([smhd])=([0-9]+)%?$/.exec(item);
    if (!m) return new Error(`"${item}": a wave is TIME=PERCENT, e.g. 6h=50% (time in s, m, h or d)`);
    waves.push({ after: Number(m[1]) * units[m[2]!]!, percent: Number(m[3]) });
  }
  const problems = scheduleProblems(waves);
  return problems.length ? new Error(`waves "${text}": ${problems.join('; ')}`) : waves;
}

/** A schedule in the words parseWaves reads, with the largest whole unit. */
export function formatWaves(waves: readonly Wave[]): string {
  const unit = (s: number) => (s % 86400 === 0 && s ? `${s / 86400}d` : s % 3600 === 0 ? `${s / 3600}h`
    : s % 60 === 0 ? `${s / 60}m` : `${s}s`);
  return waves.map((w) => `${unit(w.after)}=${w.percent}%`).join(',');
}
