// terminal: what the terminal cosictl writes to can do, so that colors and screen control are
// used only where they work: not in a pipe or a file, not on TERM=dumb, not when NO_COLOR is set
// (no-color.org: any non-empty value).

export interface TerminalCaps {
  /** A terminal, not a pipe or a file: the cursor can be moved and the screen redrawn. */
  interactive: boolean;
  /** Colors and bold may be used. */
  color: boolean;
  columns: number;
  rows: number;
}

interface Stream { isTTY?: boolean; columns?: number; rows?: number }

/** Sizes when the stream says none (a pipe): $COLUMNS and $LINES, else these. */
const FALLBACK = { columns: 120, rows: 50 };

const positive = (text: string | undefined): number | undefined => {
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? n : undefined;
};

export function terminalCaps(stream: Stream, env: NodeJS.ProcessEnv = process.env): TerminalCaps {
  const dumb = !env.TERM || env.TERM === 'dumb';
  const interactive = stream.isTTY === true && !dumb;
  return {
    interactive,
    color: interactive && !env.NO_COLOR,
    // A terminal that says 0 (a serial console, some `docker exec -t`) says nothing.
    columns: (stream.isTTY ? positive(String(stream.columns)) : undefined) ?? positive(env.COLUMNS) ?? FALLBACK.columns,
    rows: (stream.isTTY ? positive(String(stream.rows)) : undefined) ?? positive(env.LINES) ?? FALLBACK.rows,
  };
}
