// hpack-huffman: the Huffman code HPACK compresses header strings with (RFC 7541, section 5.2 and appendix B).
// The code is canonical, so each symbol's code length is all it takes: codes are handed out in order of length,
// then of symbol. The lengths were measured against node's own encoder (nghttp2) for every byte a header value
// may hold, and taken from the RFC's table for the control bytes no value may carry; hpack.test.ts checks the
// code is complete (Kraft's sum is exactly 1) and decodes what node encodes.

/** Code length, bits, of each symbol: bytes 0-255, then 256, end of string (EOS). */
export const HUFFMAN_CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

export const EOS = 256;

/** Why a Huffman-coded string cannot be decoded. */
export class HuffmanError extends Error {
  constructor(message: string, readonly input: Uint8Array) {
    super(message);
    this.name = 'HuffmanError';
  }
}

interface Canonical {
  /** Per length: the first code of that length, how many there are, where they start in `symbols`. */
  first: number[];
  count: number[];
  start: number[];
  symbols: number[];
}

function canonical(lengths: readonly number[]): Canonical {
  const max = Math.max(...lengths);
  const count = new Array<number>(max + 1).fill(0);
  for (const l of lengths) count[l]!++;
  // By length, then by symbol: one bucket per length, filled in symbol order (a sort with a comparator cost each
  // process a few milliseconds of its start, run once in the interpreter).
  const buckets = Array.from({ length: max + 1 }, (): number[] => []);
  lengths.forEach((l, s) => buckets[l]!.push(s));
  const symbols = buckets.flat();
  const first = new Array<number>(max + 1).fill(0);
  const start = new Array<number>(max + 1).fill(0);
  let code = 0;
  let at = 0;
  for (let l = 1; l <= max; l++) {
    first[l] = code;
    start[l] = at;
    code = (code + count[l]!) * 2;
    at += count[l]!;
  }
  return { first, count, start, symbols };
}

const CODE = canonical(HUFFMAN_CODE_LENGTHS);

/** Each symbol's code, for tests and an encoder: [code, length in bits]. */
export function huffmanCode(symbol: number): [number, number] {
  const length = HUFFMAN_CODE_LENGTHS[symbol]!;
  const index = CODE.symbols.indexOf(symbol) - CODE.start[length]!;
  return [CODE.first[length]! + index, length];
}

/**
 * Decodes a Huffman-coded string. Refused as the RFC says: an EOS symbol inside, padding longer than 7 bits, or
 * padding that is not the most significant bits of EOS (all ones).
 */
export function huffmanDecode(input: Uint8Array): Buffer {
  const out: number[] = [];
  let code = 0;
  let length = 0;
  for (const byte of input) {
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1);
      length++;
      const offset = code - CODE.first[length]!;
      if (length < CODE.first.length && offset >= 0 && offset < CODE.count[length]!) {
        const symbol = CODE.symbols[CODE.start[length]! + offset]!;
        if (symbol === EOS) throw new HuffmanError('an EOS symbol inside a Huffman-coded string', input);
        out.push(symbol);
        code = 0;
        length = 0;
      } else if (length >= CODE.first.length) {
        throw new HuffmanError('bits that are no Huffman code', input);
      }
    }
  }
  if (length > 7) throw new HuffmanError(`${length} bits of padding (at most 7)`, input);
  if (code !== 2 ** length - 1) throw new HuffmanError('padding that is not the start of EOS (all ones)', input);
  return Buffer.from(out);
}
