// jsonpath: the subset of kubectl-style JSONPath that print columns, --sort-by and
// `-o jsonpath=` use: "{.a.b}", "{.list[0].x}", "{.items[*].metadata.id}" (every element),
// and templates mixing text with {expressions}, {range EXPR}...{end} and quoted text {"\n"}.
export class JsonPathError extends Error {
  constructor(message: string, readonly expression: string) { super(`jsonpath "${expression}": ${message}`); }
}

/** The value at `expr`; a [*] step maps over a list, so the result is then a list. */
export function evalJsonPath(expr: string, value: unknown): unknown {
  const m = /^\{(.*)\}$/s.exec(expr.trim());
  const path = (m ? m[1]! : expr).trim();
  if (path === '' || path === '.' || path === '@') return value;
  const steps = path.replace(/^\$?\./, '').match(/[^.[\]]+|\[\d+\]|\[\*\]/g) ?? [];
  const walk = (cur: unknown, i: number): unknown => {
    if (i === steps.length) return cur;
    if (cur === null || cur === undefined) return undefined;
    const s = steps[i]!;
    if (s === '[*]') return Array.isArray(cur) ? cur.map((x) => walk(x, i + 1)).flat() : undefined;
    const idx = /^\[(\d+)\]$/.exec(s);
    const next = idx ? (Array.isArray(cur) ? cur[Number(idx[1])] : undefined) : (cur as Record<string, unknown>)[s];
    return walk(next, i + 1);
  };
  return walk(value, 0);
}

export function renderCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(renderCell).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replace(/\n/g, '\\n');
}

type Piece = { text: string } | { expr: string } | { range: string; body: Piece[] };

function parseTemplate(template: string): Piece[] {
  const top: Piece[] = [];
  const stack: { body: Piece[]; range?: string }[] = [{ body: top }];
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    if (open < 0) {
      stack.at(-1)!.body.push({ text: template.slice(at) });
      break;
    }
    if (open > at) stack.at(-1)!.body.push({ text: template.slice(at, open) });
    const close = template.indexOf('}', open);
    if (close < 0) throw new JsonPathError(`no } closes the { at ${open}`, template);
    const inner = template.slice(open + 1, close).trim();
    at = close + 1;
    const quoted = /^"(.*)"$/s.exec(inner);
    if (quoted) stack.at(-1)!.body.push({ text: JSON.parse(`"${quoted[1]!}"`) as string });
    else if (inner.startsWith('range ')) stack.push({ body: [], range: inner.slice(6).trim() });
    else if (inner === 'end') {
      const done = stack.pop()!;
      if (done.range === undefined) throw new JsonPathError('{end} without {range}', template);
      stack.at(-1)!.body.push({ range: done.range, body: done.body });
    } else stack.at(-1)!.body.push({ expr: inner });
  }
  if (stack.length > 1) throw new JsonPathError('{range} without {end}', template);
  return top;
}

/** A kubectl-style template over `value`: lists print space-separated, as kubectl prints them. */
export function renderTemplate(template: string, value: unknown): string {
  const show = (v: unknown): string => (Array.isArray(v) ? v.map(show).join(' ')
    : v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const run = (pieces: Piece[], cur: unknown): string => pieces.map((p) => {
    if ('text' in p) return p.text;
    if ('expr' in p) return show(evalJsonPath(p.expr, cur));
    const over = evalJsonPath(p.range, cur);
    return (Array.isArray(over) ? over : over === undefined ? [] : [over]).map((x) => run(p.body, x)).join('');
  }).join('');
  return run(parseTemplate(template), value);
}
