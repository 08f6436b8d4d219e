// query: label and id queries. Terms of a query AND; queries OR; no query matches
// all. Semantics follow the reference runtime: a missing label makes a term false
// (so an inverted term true); an unparsable number makes a numeric term never match,
// inverted or not.
import { StateError } from './errors.ts';

export type LabelOp = 'exists' | 'equal' | 'in' | 'lt' | 'lte' | 'lt-numeric' | 'lte-numeric';
export interface LabelTerm { key: string; op: LabelOp; value: readonly string[]; invert?: boolean }
export interface LabelQuery { terms: readonly LabelTerm[] }

/** Parses "100", "-5", "10k", "2Gi", "10kg" (only the first one or two letters of the unit count). */
export function parseLabelNumber(text: string): bigint | null {
  const v = text.trim();
  let split = v.length;
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (!((c >= '0' && c <= '9') || c === '-')) {
      split = i;
      break;
    }
  }
  const digits = v.slice(0, split);
  if (!/^-?\d+$/.test(digits)) return null;
  const unit = v.slice(split).trim().toLowerCase();
  let mult: bigint | null = null;
  if (unit === '') mult = 1n;
  else {
    const binary: Record<string, bigint> = {
      pi: 1n << 50n, ti: 1n << 40n, gi: 1n << 30n, mi: 1n << 20n, ki: 1n << 10n,
    };
    const decimal: Record<string, bigint> = { p: 10n ** 15n, t: 10n ** 12n, g: 10n ** 9n, m: 10n ** 6n, k: 10n ** 3n };
    mult = binary[unit.slice(0, 2)] ?? decimal[unit[0]!] ?? null;
  }
  return mult === null ? null : BigInt(digits) * mult;
}

/** true/false, or null when the term cannot be evaluated (never matches, even inverted). */
function evaluate(labels: Readonly<Record<string, string>>, t: LabelTerm): boolean | null {
  if (!Object.hasOwn(labels, t.key)) return false;
  const value = labels[t.key]!;
  if (t.op !== 'exists' && t.value.length === 0) return false;
  const v0 = t.value[0]!;
  switch (t.op) {
    case 'exists': return true;
    case 'equal': return value === v0;
    case 'in': return t.value.includes(value);
    case 'lt': return value < v0;
    case 'lte': return value <= v0;
    case 'lt-numeric': case 'lte-numeric': {
      const l = parseLabelNumber(value);
      const r = parseLabelNumber(v0);
      if (l === null || r === null) return null;
      return t.op === 'lt-numeric' ? l < r : l <= r;
    }
  }
}

export function matchesTerm(labels: Readonly<Record<string, string>>, t: LabelTerm): boolean {
  const m = evaluate(labels, t);
  if (m === null) return false;
  return t.invert ? !m : m;
}

export function matchesQuery(labels: Readonly<Record<string, string>>, q: LabelQuery): boolean {
  return q.terms.every((t) => matchesTerm(labels, t));
}

export function matchesLabelQueries(
  labels: Readonly<Record<string, string>>, queries: readonly LabelQuery[] | undefined,
): boolean {
  return !queries || queries.length === 0 || queries.some((q) => matchesQuery(labels, q));
}

let linearEngine = false;

/**
 * Compiles an id regexp (unanchored, as in the reference). A client's regexp runs on V8's
 * linear-time engine: a backtracking one ("(a+)+$") takes seconds on a 26-character id
 * and would stall everyone else's calls; what that engine cannot run (back references,
 * lookaround) is refused. A bad one is invalid-argument.
 */
export function compileIdQuery(regexp: string | undefined): RegExp | undefined {
  if (!regexp) return undefined;
  if (regexp.length > 1024) {
    throw new StateError('invalid-argument', `id query regexp of ${regexp.length} characters: at most 1024`);
  }
  if (!linearEngine) {
    // node:v8 at this first use only (machinery/sys/lazy-builtins.ts says why; this layer is below it).
    process.getBuiltinModule('node:v8').setFlagsFromString('--enable-experimental-regexp_engine');
    linearEngine = true;
  }
  try {
    return new RegExp(regexp, 'l');
  } catch (e) {
    throw new StateError('invalid-argument', `invalid id query regexp "${regexp}": ${(e as Error).message}`, regexp);
  }
}

export interface ResourceFilter { labelQueries?: readonly LabelQuery[]; idQuery?: string }

/** A predicate over (id, labels) for a filter; compiles the regexp once. */
export function compileFilter(
  f: ResourceFilter | undefined,
): (id: string, labels: Readonly<Record<string, string>>) => boolean {
  const re = compileIdQuery(f?.idQuery);
  const queries = f?.labelQueries;
  return (id, labels) => (!re || re.test(id)) && matchesLabelQueries(labels, queries);
}
