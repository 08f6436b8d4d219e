// line-diff: a unified diff of two short texts (a resource as the machine holds it and as a
// file declares it), from their longest common subsequence of lines. Quadratic: for specs,
// which are tens of lines, not for files of thousands.

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

export function diffLines(before: readonly string[], after: readonly string[]): DiffLine[] {
  const n = before.length;
  const m = after.length;
  // lcs[i][j]: the common subsequence's length of before[i..] and after[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push({ op: ' ', text: before[i]! });
      i++;
      j++;
    }
    // On a tie the old line goes first: a changed line reads as - then +.
    else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push({ op: '-', text: before[i++]! });
    else out.push({ op: '+', text: after[j++]! });
  }
  return out;
}

/** The diff as text: `--- old`, `+++ new`, then every line marked (specs are short: no hunks). */
export function unifiedDiff(oldName: string, newName: string, before: string, after: string): string {
  const split = (s: string) => (s ? s.replace(/\n$/, '').split('\n') : []);
  const lines = diffLines(split(before), split(after));
  return `--- ${oldName}\n+++ ${newName}\n${lines.map((l) => `${l.op}${l.text}`).join('\n')}\n`;
}
