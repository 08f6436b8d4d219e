// stats: the benchmarks' summary of repeated measurements (median, min, max) and its print form.
export interface Stats { median: number; min: number; max: number }

export function stats(xs: readonly number[]): Stats {
  if (!xs.length) throw new Error('stats of no measurements');
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return { median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2, min: s[0]!, max: s.at(-1)! };
}

export const fmtStats = (s: Stats, unit = 's', digits = 3) =>
  `median ${s.median.toFixed(digits)}${unit}  min ${s.min.toFixed(digits)}${unit}  max ${s.max.toFixed(digits)}${unit}`;
