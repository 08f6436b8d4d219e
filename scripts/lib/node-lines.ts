// node-lines: Node's release lines and the day each stops getting releases (security fixes included), from the
// Node.js release schedule (github.com/nodejs/Release, schedule.json), kept in the repository because the build
// has no network. The build warns of a pinned runtime past its end (image/runtime-support.test.ts tests the rule);
// update this table when the schedule changes or a new LTS line is chosen.

export interface NodeLine {
  /** The major version. */
  major: number;
  /** The first day of Active LTS (a new line enters it the day the one before enters maintenance). */
  ltsFrom: string;
  /** End of life: no release of this line after this day. */
  endOfLife: string;
}

export const NODE_LINES: readonly NodeLine[] = [
  { major: 20, ltsFrom: '2023-10-24', endOfLife: '2026-04-30' },
  { major: 22, ltsFrom: '2024-10-29', endOfLife: '2027-04-30' },
  { major: 24, ltsFrom: '2025-10-28', endOfLife: '2028-04-30' },
  { major: 26, ltsFrom: '2026-10-20', endOfLife: '2029-04-30' },
];

/** The line of `version` ("24.21.0" or "v24.21.0"), or undefined when the table has none. */
export function lineOf(version: string): NodeLine | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  return NODE_LINES.find((l) => l.major === major);
}

/**
 * Why `version` is no runtime to ship on `today` (YYYY-MM-DD), or undefined when it is supported: a line the
 * table does not know (an odd, short-lived one, or a newer one to add), not an LTS yet, or past its end of life.
 */
export function unsupportedBecause(version: string, today: string): string | undefined {
  const line = lineOf(version);
  if (!line) return `Node ${version}: no line in scripts/lib/node-lines.ts (only LTS lines are shipped)`;
  if (today < line.ltsFrom) return `Node ${version}: line ${line.major} is no LTS until ${line.ltsFrom}`;
  if (today > line.endOfLife) {
    return `Node ${version}: line ${line.major} reached its end of life on ${line.endOfLife}: `
      + 'no security releases since';
  }
  return undefined;
}
