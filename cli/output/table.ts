// table: aligned columns, like kubectl and talosctl.
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells
    .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
    .join('   ')
    .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
