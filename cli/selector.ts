// selector: kubectl-like label selectors -> COSI label queries.
//   k=v  k==v  k!=v  k  !k  k in (a,b)  k notin (a,b)  k<N  k<=N  k>N  k>=N (numeric, units allowed)
// Commas separate terms (AND); several -l flags make several queries (OR).
import type { LabelQuery, LabelTerm } from '../cosi/state/query.ts';
import { CliError, EXIT } from './errors.ts';

function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter(Boolean);
}

export function parseSelector(s: string): LabelQuery {
  const bad = (term: string) => new CliError(
    `bad label selector term "${term}" in "${s}" (try k=v, k!=v, k, !k, "k in (a,b)", k<10)`, EXIT.usage,
  );
  const terms = splitTerms(s).flatMap((term): LabelTerm[] => [...parseTerm(term)]);
  if (!terms.length) throw bad(s);
  return { terms };

  function* parseTerm(term: string): Generator<LabelTerm> {
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      yield {
        key: m[1]!, op: 'in', value: m[3]!.split(',').map((v) => v.trim()).filter(Boolean), invert: m[2] === 'notin',
      };
      return;
    }
    if ((m = /^([\w./-]+)\s*(<=|>=|<|>)\s*(\S+)$/.exec(term))) {
      const [, key, op, v] = m as unknown as [string, string, string, string];
      if (op === '<') {
        yield { key, op: 'lt-numeric', value: [v] };
        return;
      }
      if (op === '<=') {
        yield { key, op: 'lte-numeric', value: [v] };
        return;
      }
      // k>N is "k exists and not k<=N"; k>=N is "k exists and not k<N": an inverted term alone
      // would match every resource without the label (kubectl's Gt and Lt need the key too).
      yield { key, op: 'exists', value: [] };
      yield { key, op: op === '>' ? 'lte-numeric' : 'lt-numeric', value: [v], invert: true };
      return;
    }
    if ((m = /^([\w./-]+)\s*(!=|==|=)\s*(.*)$/.exec(term))) {
      yield { key: m[1]!, op: 'equal', value: [m[3]!.trim()], invert: m[2] === '!=' };
      return;
    }
    if ((m = /^!\s*([\w./-]+)$/.exec(term))) {
      yield { key: m[1]!, op: 'exists', value: [], invert: true };
      return;
    }
    if ((m = /^([\w./-]+)$/.exec(term))) {
      yield { key: m[1]!, op: 'exists', value: [] };
      return;
    }
    throw bad(term);
  }
}
