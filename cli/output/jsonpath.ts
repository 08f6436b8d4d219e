// jsonpath: the subset of kubectl-style JSONPath that print columns use:
// "{.a.b}", "{.list[0].x}", "{.a}" (a list renders comma-separated).
export function evalJsonPath(expr: string, value: unknown): unknown {
  const m = /^\{(.*)\}$/.exec(expr.trim());
  const path = (m ? m[1]! : expr).trim();
  if (path === '' || path === '.' || path === '@') return value;
  const steps = path.replace(/^\./, '').match(/[^.[\]]+|\[\d+\]/g) ?? [];
  let cur: unknown = value;
  for (const s of steps) {
    if (cur === null || cur === undefined) return undefined;
    const idx = /^\[(\d+)\]$/.exec(s);
    cur = idx ? (Array.isArray(cur) ? cur[Number(idx[1])] : undefined) : (cur as Record<string, unknown>)[s];
  }
  return cur;
}

export function renderCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(renderCell).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replace(/\n/g, '\\n');
}
