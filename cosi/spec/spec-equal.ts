// spec-equal: the one way specs (and labels, annotations) are compared: as data, key
// order ignored, undefined keys the same as missing ones.

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);
/** A key is data when it is the map's own and enumerable (what Object.keys lists): `__proto__` parsed from YAML is. */
const isField = (m: Record<string, unknown>, k: string) => Object.prototype.propertyIsEnumerable.call(m, k);
/** A map's field, undefined when it has none (nothing inherited: `constructor` is no field). */
const field = (m: Record<string, unknown>, k: string) => (isField(m, k) ? m[k] : undefined);

/** Where a and b differ, as paths ("spec.mtu: 1400 vs 1500"); empty when equal. At most `limit` entries. */
export function specDifferences(a: unknown, b: unknown, path = 'spec', limit = 8): string[] {
  const out: string[] = [];
  // A bigint has no JSON: shown as a literal rather than thrown at (a message of a difference must not fail).
  const show = (v: unknown) => (v === undefined ? '(unset)'
    : JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x))?.slice(0, 60));
  const walk = (x: unknown, y: unknown, p: string) => {
    if (out.length >= limit || x === y) return;
    if (isMap(x) && isMap(y)) {
      for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) walk(field(x, k), field(y, k), `${p}.${k}`);
      return;
    }
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) {
        out.push(`${p}: ${x.length} items vs ${y.length}`);
        return;
      }
      for (let i = 0; i < x.length; i++) walk(x[i], y[i], `${p}[${i}]`);
      return;
    }
    if (x instanceof Uint8Array && y instanceof Uint8Array && Buffer.compare(x, y) === 0) return;
    if (Number.isNaN(x) && Number.isNaN(y)) return;
    out.push(`${p}: ${show(x)} vs ${show(y)}`);
  };
  walk(a, b, path);
  return out;
}

/**
 * True when a and b are the same data: specDifferences(a, b) is empty. A walk of its own, without the paths
 * specDifferences builds: every no-op write of a controller compares a spec with itself this way, which made this
 * a tenth of PID 1's CPU while plugins started (a guest profile, 2026-12-07).
 */
export function sameSpec(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isMap(a) && isMap(b)) {
    for (const k of Object.keys(a)) {
      if (!sameSpec(a[k], field(b, k))) return false;
    }
    // A key b has and a lacks is the same only as an undefined one.
    for (const k of Object.keys(b)) {
      if (b[k] !== undefined && !isField(a, k)) return false;
    }
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!sameSpec(a[i], b[i])) return false;
    }
    return true;
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  return Number.isNaN(a) && Number.isNaN(b);
}
