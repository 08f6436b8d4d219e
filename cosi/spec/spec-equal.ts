// spec-equal: the one way specs (and labels, annotations) are compared: as data, key
// order ignored, undefined keys the same as missing ones.

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);

/** Where a and b differ, as paths ("spec.mtu: 1400 vs 1500"); empty when equal. At most `limit` entries. */
export function specDifferences(a: unknown, b: unknown, path = 'spec', limit = 8): string[] {
  const out: string[] = [];
  const show = (v: unknown) => (v === undefined ? '(unset)' : JSON.stringify(v)?.slice(0, 60));
  const walk = (x: unknown, y: unknown, p: string) => {
    if (out.length >= limit || x === y) return;
    if (isMap(x) && isMap(y)) {
      for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) walk(x[k], y[k], `${p}.${k}`);
      return;
    }
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) {
        out.push(`${p}: ${x.length} items vs ${y.length}`);
        return;
      }
      x.forEach((v, i) => walk(v, y[i], `${p}[${i}]`));
      return;
    }
    if (x instanceof Uint8Array && y instanceof Uint8Array && Buffer.compare(x, y) === 0) return;
    if (Number.isNaN(x) && Number.isNaN(y)) return;
    out.push(`${p}: ${show(x)} vs ${show(y)}`);
  };
  walk(a, b, path);
  return out;
}

/** True when a and b are the same data. */
export function sameSpec(a: unknown, b: unknown): boolean {
  return specDifferences(a, b, '', 1).length === 0;
}
