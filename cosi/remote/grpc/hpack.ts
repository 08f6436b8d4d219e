// hpack: HTTP/2's header compression (RFC 7541) as a client needs it. Decoding is complete: the static and the
// dynamic table, size updates, integers, raw and Huffman strings (hpack-huffman.ts). Encoding writes every field
// as a literal that is never added to a table, raw: our requests are a handful of short headers, and a decoder
// must accept that form, so no table is kept for the other side.
import { huffmanDecode } from './hpack-huffman.ts';

/** A header list in order: [name, value] pairs, names in lower case. */
export type HeaderList = [string, string][];

/** Why a header block cannot be decoded (a connection error: COMPRESSION_ERROR), with the block. */
export class HpackError extends Error {
  constructor(message: string, readonly block: Uint8Array) {
    super(message);
    this.name = 'HpackError';
  }
}

/** RFC 7541 appendix A: index 1 is the first. */
export const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];

/** The size an entry counts for in a dynamic table (RFC 7541, 4.1). */
const entrySize = (name: string, value: string) => name.length + value.length + 32;

/** Integers larger than this are refused: no header block of ours comes near, a hostile one would. */
const MAX_INTEGER = 2 ** 31 - 1;

/** Appends `value` with an N-bit prefix; `first` holds the bits above the prefix. */
export function encodeInteger(out: number[], value: number, prefixBits: number, first = 0): void {
  const max = 2 ** prefixBits - 1;
  if (value < max) {
    out.push(first | value);
    return;
  }
  out.push(first | max);
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/** Encodes a header list, each field a literal never indexed with a new name, raw strings. */
export function encodeHeaders(headers: HeaderList): Buffer {
  const out: number[] = [];
  for (const [name, value] of headers) {
    out.push(0x10);
    for (const s of [name, value]) {
      const bytes = Buffer.from(s, 'latin1');
      encodeInteger(out, bytes.length, 7);
      for (const b of bytes) out.push(b);
    }
  }
  return Buffer.from(out);
}

export class HpackDecoder {
  private readonly dynamic: [string, string][] = [];
  private size = 0;
  private limit: number;

  /** maxTableSize: what this side advertised as SETTINGS_HEADER_TABLE_SIZE (4096 unless said otherwise). */
  constructor(private readonly maxTableSize = 4096) {
    this.limit = maxTableSize;
  }

  /** Decodes one whole header block (HEADERS and its CONTINUATIONs joined). */
  decode(block: Uint8Array): HeaderList {
    const headers: HeaderList = [];
    let at = 0;
    const fail = (why: string): never => {
      throw new HpackError(why, block);
    };
    const integer = (prefixBits: number): number => {
      if (at >= block.length) fail('a header block that ends inside a field');
      const max = 2 ** prefixBits - 1;
      let value = block[at++]! & max;
      if (value < max) return value;
      let scale = 1;
      for (;;) {
        if (at >= block.length) fail('a header block that ends inside an integer');
        const b = block[at++]!;
        value += (b & 127) * scale;
        scale *= 128;
        // Five bytes hold 2^31; more (zero bytes that add nothing, as far as a hostile encoder likes) are refused.
        if (value > MAX_INTEGER || scale > 2 ** 35) fail('an integer over 2^31');
        if (!(b & 128)) return value;
      }
    };
    const string = (): string => {
      if (at >= block.length) fail('a header block that ends before a string');
      const huffman = (block[at]! & 0x80) !== 0;
      const length = integer(7);
      if (at + length > block.length) fail(`a string of ${length} bytes past the block's end`);
      const raw = block.subarray(at, at + length);
      at += length;
      try {
        return (huffman ? huffmanDecode(raw) : Buffer.from(raw)).toString('latin1');
      } catch (e) {
        return fail(`a Huffman string: ${(e as Error).message}`);
      }
    };
    const entry = (index: number): readonly [string, string] => {
      if (index === 0) fail('index 0');
      if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!;
      const e = this.dynamic[index - STATIC_TABLE.length - 1];
      return e ?? fail(`index ${index} past the tables (${STATIC_TABLE.length} static, `
        + `${this.dynamic.length} dynamic)`);
    };
    let fieldSeen = false;
    while (at < block.length) {
      const b = block[at]!;
      if (b & 0x80) {
        const [name, value] = entry(integer(7));
        headers.push([name, value]);
        fieldSeen = true;
      } else if ((b & 0xe0) === 0x20) {
        // A size update may only open a block (RFC 7541, 4.2).
        if (fieldSeen) fail('a dynamic table size update after a field');
        const size = integer(5);
        if (size > this.maxTableSize) fail(`a dynamic table of ${size} bytes (at most ${this.maxTableSize})`);
        this.limit = size;
        this.evict(0);
      } else {
        const indexing = (b & 0x40) !== 0;
        const nameIndex = integer(indexing ? 6 : 4);
        const name = nameIndex === 0 ? string() : entry(nameIndex)[0];
        const value = string();
        headers.push([name, value]);
        if (indexing) this.add(name, value);
        fieldSeen = true;
      }
    }
    return headers;
  }

  private add(name: string, value: string): void {
    const size = entrySize(name, value);
    this.evict(size);
    // An entry larger than the table empties it and is not added (RFC 7541, 4.4).
    if (size > this.limit) return;
    this.dynamic.unshift([name, value]);
    this.size += size;
  }

  private evict(room: number): void {
    while (this.dynamic.length && this.size + room > this.limit) {
      const [name, value] = this.dynamic.pop()!;
      this.size -= entrySize(name, value);
    }
  }
}
