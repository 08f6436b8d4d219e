// versions: how the machine orders its own versions (upgrades, minimum versions, update releases): one rule for the
// upgrader, the update poller and the publisher.

/**
 * Compares dotted versions number by number ("1.10.0" > "1.9.2"); a suffix (-rc1, +b2) sorts a version
 * below the same version without one, and suffixes compare part by part, digits as numbers (rc10 > rc9);
 * "dev" (a build run from source) sorts below everything.
 */
export function compareVersions(a: string, b: string): number {
  const split = (v: string) => {
    const m = /^([0-9]+(?:\.[0-9]+)*)(.*)$/.exec(v);
    return m ? { nums: m[1]!.split('.').map(Number), rest: m[2]! } : { nums: [-1], rest: v };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d) return Math.sign(d);
  }
  if (x.rest === y.rest) return 0;
  if (!x.rest) return 1;
  if (!y.rest) return -1;
  return compareSuffixes(x.rest, y.rest);
}

/** Suffixes cut into runs of digits and of the rest: digits compare as numbers, the rest as text. */
function compareSuffixes(a: string, b: string): number {
  const parts = (s: string) => s.match(/[0-9]+|[^0-9]+/g) ?? [];
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const p = x[i];
    const q = y[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const d = /^[0-9]/.test(p) && /^[0-9]/.test(q) ? Number(p) - Number(q) : p < q ? -1 : p > q ? 1 : 0;
    if (d) return Math.sign(d);
  }
  return 0;
}
