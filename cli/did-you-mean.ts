// did-you-mean: the known names nearest a mistyped one (a command, a resource type), as kubectl and git offer
// them. Near means few edits (insert, delete, replace, or swap two neighbours) for the word's length, or the
// word is the start of a name.

/** Edits between a and b: insertions, deletions, replacements and swaps of two neighbours (each counts 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      const swapped = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
      if (swapped) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The names nearest `word` (case ignored), best first, at most `max`; none when nothing is near. */
export function nearestNames(word: string, names: Iterable<string>, max = 3): string[] {
  const w = word.toLowerCase();
  // One edit in a short word, two from 5 letters, three from 9: a typo, not another word.
  const allowed = w.length < 5 ? 1 : w.length < 9 ? 2 : 3;
  const scored = new Map<string, number>();
  for (const name of names) {
    const n = name.toLowerCase();
    if (n === w) continue;
    const distance = w.length >= 3 && n.startsWith(w) ? 0.5 : editDistance(w, n);
    if (distance <= allowed) scored.set(name, Math.min(distance, scored.get(name) ?? Infinity));
  }
  return [...scored].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).slice(0, max).map(([n]) => n);
}

/**
 * " (did you mean X?)" or " (did you mean X or Y?)"; empty when nothing is near. `as` names what a near name
 * stands for (a type's aliases all stand for its display name), said once each.
 */
export function didYouMean(word: string, names: Iterable<string>, as: (name: string) => string = (n) => n): string {
  const near = [...new Set(nearestNames(word, names, 12).map(as))].slice(0, 3);
  if (!near.length) return '';
  const last = near.at(-1)!;
  return ` (did you mean ${near.length > 1 ? `${near.slice(0, -1).join(', ')} or ${last}` : last}?)`;
}
