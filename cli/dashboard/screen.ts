// screen: a dashboard frame as lines of styled text, cut to the terminal's width and painted
// with or without ANSI colors. Styles are named for what they mean, not how they look.

export type Style = 'plain' | 'title' | 'heading' | 'good' | 'bad' | 'warn' | 'dim';

export interface Segment { text: string; style?: Style }
export type ScreenLine = Segment[];

const SGR: Record<Style, string> = {
  plain: '', title: '\x1b[7m', heading: '\x1b[1m', good: '\x1b[32m', bad: '\x1b[1;31m', warn: '\x1b[33m',
  dim: '\x1b[2m',
};
const RESET = '\x1b[0m';

/** Control characters a machine's log line may hold would move the cursor: each is shown as '?'. */
const sanitize = (text: string) => text.replace(/[\x00-\x1f\x7f-\x9f]/g, '?');

export const seg = (text: string, style: Style = 'plain'): Segment => ({ text, style });

export const lineLength = (line: ScreenLine): number => line.reduce((n, s) => n + [...s.text].length, 0);

/** The line cut to `width` characters (a cut one ends with '…'). */
export function fit(line: ScreenLine, width: number): ScreenLine {
  if (lineLength(line) <= width) return line;
  const out: ScreenLine = [];
  let left = width - 1;
  for (const s of line) {
    if (left <= 0) break;
    const chars = [...s.text];
    out.push({ ...s, text: chars.slice(0, left).join('') });
    left -= Math.min(left, chars.length);
  }
  out.push(seg('…', 'dim'));
  return out;
}

/** One line as text: with colors (and the title's bar padded to `width`) or plain. */
export function paintLine(line: ScreenLine, width: number, color: boolean): string {
  const fitted = fit(line, width);
  if (!color) return fitted.map((s) => sanitize(s.text)).join('').trimEnd();
  const painted = fitted.map((s) => {
    const sgr = SGR[s.style ?? 'plain'];
    return sgr ? `${sgr}${sanitize(s.text)}${RESET}` : sanitize(s.text);
  }).join('');
  // A title is a bar across the whole width.
  if (!fitted.some((s) => s.style === 'title')) return painted;
  return `${painted}${SGR.title}${' '.repeat(width - lineLength(fitted))}${RESET}`;
}

/** Cursor home, each line cleared to its end, the rest of the screen cleared: no flicker, no leftovers. */
export const frame = (lines: string[]): string => `\x1b[H${lines.map((l) => `${l}\x1b[K`).join('\r\n')}\x1b[J`;

/** The alternate screen with the cursor hidden, and back. */
export const ENTER_SCREEN = '\x1b[?1049h\x1b[?25l';
export const LEAVE_SCREEN = '\x1b[?25h\x1b[?1049l';
