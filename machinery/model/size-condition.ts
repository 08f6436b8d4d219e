// size-condition: a disk size as users write it in an InstallRequest (and cosictl install --size):
// an optional comparison and a size, decimal or binary units. Shared by the engine, which picks the
// disk, and cosictl, which refuses a bad one before asking.
const UNITS: Record<string, number> = {
  '': 1, B: 1, k: 1e3, kB: 1e3, M: 1e6, MB: 1e6, G: 1e9, GB: 1e9, T: 1e12, TB: 1e12,
  K: 1e3, KB: 1e3, ki: 2 ** 10, kiB: 2 ** 10, Ki: 2 ** 10, KiB: 2 ** 10, Mi: 2 ** 20, MiB: 2 ** 20,
  Gi: 2 ** 30, GiB: 2 ** 30, Ti: 2 ** 40, TiB: 2 ** 40,
};
const SIZE_RE = /^(<=|>=|<|>|==)?\s*([0-9]+(?:\.[0-9]+)?)\s*([kKMGT]i?B?|B)?$/; // as the proto's pattern

export type SizeOp = '<=' | '>=' | '<' | '>' | '==';
export interface SizeCondition { op: SizeOp; bytes: number; text: string }

/** ">= 10GiB", "< 2TB", "8GiB" (exactly): the condition, or an Error naming the text. */
export function parseSizeCondition(text: string): SizeCondition | Error {
  const m = SIZE_RE.exec(text.trim());
  const factor = m ? UNITS[m[3] ?? ''] : undefined;
  if (!m || factor === undefined) {
    return new Error(`size "${text}": want an optional comparison (<, <=, >, >=, ==) and a size such as 10GiB or `
      + '500GB');
  }
  return { op: (m[1] as SizeOp | undefined) ?? '==', bytes: Math.round(Number(m[2]) * factor), text: text.trim() };
}

export function sizeMatches(c: SizeCondition, bytes: number): boolean {
  switch (c.op) {
    case '<': return bytes < c.bytes;
    case '<=': return bytes <= c.bytes;
    case '>': return bytes > c.bytes;
    case '>=': return bytes >= c.bytes;
    case '==': return bytes === c.bytes;
  }
}
