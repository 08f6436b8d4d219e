// selector: kubectl-like label selectors -> COSI label queries.
//   k=v  k==v  k!=v  k  !k  k in (a,b)  k notin (a,b)  k<N  k<=N  k>N  k>=N (numeric, units allowed)
// Commas separate terms (AND); several -l flags make several queries (OR).
import type { LabelQuery, LabelTerm } from '../init/cosi/state/query.ts';
import { CliError, EXIT } from './errors.ts';

function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0; let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) { out.push(cur); cur = ''; } else cur += c;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter(Boolean);
}

export function parseSelector(s: string): LabelQuery {
  const bad = (term: string) => new CliError(
    `bad label selector term "${term}" in "${s}" (try k=v, k!=v, k, !k, "k in (a,b)", k<10)`, EXIT.usage,
  );
  const terms = splitTerms(s).map((term): LabelTerm => {
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      return {
        key: m[1]!, op: 'in', value: m[3]!.split(',').map((v) => v.trim()).filter(Boolean), invert: m[2] === 'notin',
      };
    }
    if ((m = /^([\w./-]+)\s*(<=|>=|<|>)\s*(\S+)$/.exec(term))) {
      const [, key, op, v] = m as unknown as [string, string, string, string];
      // k>N is "not k<=N"; k>=N is "not k<N".
      if (op === '<') return { key, op: 'lt-numeric', value: [v] };
      if (op === '<=') return { key, op: 'lte-numeric', value: [v] };
      if (op === '>') return { key, op: 'lte-numeric', value: [v], invert: true };
      return { key, op: 'lt-numeric', value: [v], invert: true };
    }
    if ((m = /^([\w./-]+)\s*(!=|==|=)\s*(.*)$/.exec(term))) return {
      key: m[1]!, op: 'equal', value: [m[3]!.trim()], invert: m[2] === '!=',
    };
    if ((m = /^!\s*([\w./-]+)$/.exec(term))) return { key: m[1]!, op: 'exists', value: [], invert: true };
    if ((m = /^([\w./-]+)$/.exec(term))) return { key: m[1]!, op: 'exists', value: [] };
    throw bad(term);
  });
  if (!terms.length) throw bad(s);
  return { terms };
}
