// stats: the benchmarks' summary of repeated measurements (median, min, max, percentiles) and its print form.
export interface Stats { median: number; min: number; max: number }

export function stats(xs: readonly number[]): Stats {
  if (!xs.length) throw new Error('stats of no measurements');
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return { median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2, min: s[0]!, max: s.at(-1)! };
}

/** The p-th percentile (0-100) of `xs`: the measurement below which p% of them fall (nearest rank). */
export function percentile(xs: readonly number[], p: number): number {
  if (!xs.length) throw new Error('a percentile of no measurements');
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export const fmtStats = (s: Stats, unit = 's', digits = 3) =>
  `median ${s.median.toFixed(digits)}${unit}  min ${s.min.toFixed(digits)}${unit}  max ${s.max.toFixed(digits)}${unit}`;
