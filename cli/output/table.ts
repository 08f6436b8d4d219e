// table: aligned columns, like kubectl and talosctl.
const SEP = '   ';

function line(cells: string[], widths: readonly number[]): string {
  return cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join(SEP).trimEnd();
}

/**
 * Where a command prints a table: as it is when it talks to one machine; over several (--nodes) the tables of
 * all are merged into one with a NODE column (cli/fan-out.ts).
 */
export type TableOut = (header: string[], rows: string[][]) => void;

export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [line(header, widths), ...rows.map((r) => line(r, widths))].join('\n') + '\n';
}

/**
 * A table printed a few rows at a time (a watch): the header and the first rows share their widths,
 * later rows keep them, and a column widens only when a later cell is wider than any before it.
 */
export class StreamingTable {
  private widths: number[] | undefined;
  constructor(private readonly header: string[]) {}

  /** The lines for `rows`, preceded by the header on the first call. */
  rows(rows: string[][]): string {
    const first = !this.widths;
    const widths = this.header.map(
      (h, i) => Math.max(this.widths?.[i] ?? h.length, ...rows.map((r) => (r[i] ?? '').length)),
    );
    this.widths = widths;
    const lines = [...(first ? [line(this.header, widths)] : []), ...rows.map((r) => line(r, widths))];
    return lines.length ? lines.join('\n') + '\n' : '';
  }
}
