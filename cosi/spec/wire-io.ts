// wire-io: protobuf's wire format at the byte level (varints, zigzag, fixed widths, length-delimited
// fields), for the table codec (proto-wire.ts). Ours rather than protobufjs's Reader and Writer, so that the
// program carries no protobufjs at all (it stays a build-time tool: scripts/gen-proto.ts). 64-bit integers
// are JavaScript numbers, exact up to 2^53, as the object form has them.

/** A field's wire type: the low 3 bits of its tag. */
export const WireType = { Varint: 0, Fixed64: 1, Delimited: 2, Fixed32: 5 } as const;
export type WireType = typeof WireType[keyof typeof WireType];

const TWO_32 = 4294967296;
/** Strings up to this many characters are encoded and decoded in JavaScript when they are ASCII. */
const SHORT_STRING = 48;

/** Appends a message's bytes; `fork` .. `ldelim` wraps what was written between them as one delimited field. */
export class WireWriter {
  /**
   * One scratch buffer for the process: a message is written there and copied out once, at its size, by finish
   * (encoding is synchronous, so one writer at a time has it; another gets its own).
   */
  private static scratch: Buffer | undefined = Buffer.allocUnsafe(64 << 10);
  private buf: Buffer;
  private pos = 0;
  private readonly forks: number[] = [];

  constructor(size = 256) {
    const s = WireWriter.scratch;
    if (s && s.length >= size) {
      WireWriter.scratch = undefined;
      this.buf = s;
    } else this.buf = Buffer.allocUnsafe(size);
  }

  /** Room for `n` bytes; returns where they go, past which the writer has moved. */
  private claim(n: number): number {
    this.room(n);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** A field's tag: its number and wire type. */
  tag(field: number, type: WireType): this {
    return this.uint32(((field << 3) | type) >>> 0);
  }

  uint32(v: number): this {
    this.room(5);
    let x = v >>> 0;
    while (x > 0x7f) {
      this.buf[this.pos++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    this.buf[this.pos++] = x;
    return this;
  }

  /** int32 as protobuf writes it: a negative value as its 64-bit two's complement (10 bytes). */
  int32(v: number): this {
    return v < 0 ? this.varint64(v | 0) : this.uint32(v);
  }

  sint32(v: number): this {
    return this.uint32(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** A 64-bit varint of a whole number in ±2^63 (negative: two's complement). */
  varint64(v: number): this {
    let lo: number;
    let hi: number;
    if (v >= 0) {
      lo = v % TWO_32 >>> 0;
      hi = Math.floor(v / TWO_32) >>> 0;
    } else {
      const a = -v;
      lo = a % TWO_32 >>> 0;
      hi = Math.floor(a / TWO_32) >>> 0;
      // Two's complement of (hi, lo).
      lo = (~lo + 1) >>> 0;
      hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    }
    this.room(10);
    while (hi > 0 || lo > 0x7f) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    this.buf[this.pos++] = lo;
    return this;
  }

  int64(v: number): this {
    return this.varint64(v);
  }

  uint64(v: number): this {
    return this.varint64(v);
  }

  sint64(v: number): this {
    // zigzag: 2v for v >= 0, -2v - 1 for v < 0; as unsigned, exact within ±2^52.
    return this.varint64(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  bool(v: boolean): this {
    return this.uint32(v ? 1 : 0);
  }

  fixed32(v: number): this {
    this.buf.writeUInt32LE(v >>> 0, this.claim(4));
    return this;
  }

  sfixed32(v: number): this {
    this.buf.writeInt32LE(v | 0, this.claim(4));
    return this;
  }

  float(v: number): this {
    this.buf.writeFloatLE(v, this.claim(4));
    return this;
  }

  double(v: number): this {
    this.buf.writeDoubleLE(v, this.claim(8));
    return this;
  }

  fixed64(v: number): this {
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, BigInt(v)), this.claim(8));
    return this;
  }

  sfixed64(v: number): this {
    this.buf.writeBigInt64LE(BigInt(v), this.claim(8));
    return this;
  }

  /** Length-prefixed bytes, written as they are (an already-encoded message, too). */
  bytes(v: Uint8Array): this {
    this.uint32(v.length);
    this.room(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
    return this;
  }

  string(v: string): this {
    if (v.length <= SHORT_STRING) {
      // The same for writing: ASCII byte by byte, anything else through Buffer.
      let ascii = true;
      for (let i = 0; i < v.length && ascii; i++) ascii = v.charCodeAt(i) < 0x80;
      if (ascii) {
        this.uint32(v.length);
        this.room(v.length);
        for (let i = 0; i < v.length; i++) this.buf[this.pos++] = v.charCodeAt(i);
        return this;
      }
    }
    const n = Buffer.byteLength(v);
    this.uint32(n);
    this.room(n);
    this.buf.write(v, this.pos, 'utf8');
    this.pos += n;
    return this;
  }

  /** Starts a delimited field's content (its tag already written); `ldelim` ends it. */
  fork(): this {
    // One byte kept for the length: most nested messages are shorter than 128 bytes.
    this.room(1);
    this.forks.push(this.pos);
    this.pos++;
    return this;
  }

  /** Ends the content begun by the last `fork`, prefixing its length. */
  ldelim(): this {
    const start = this.forks.pop();
    if (start === undefined) throw new Error('wire-io: ldelim without fork');
    const length = this.pos - start - 1;
    let size = 1;
    while (length >>> (7 * size) !== 0 && size < 5) size++;
    if (size > 1) {
      this.room(size - 1);
      this.buf.copyWithin(start + size, start + 1, this.pos);
      this.pos += size - 1;
    }
    let x = length;
    let at = start;
    while (x > 0x7f) {
      this.buf[at++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    this.buf[at] = x;
    return this;
  }

  /** The bytes written, in a buffer of their own; the writer is done. */
  finish(): Buffer {
    if (this.forks.length) throw new Error('wire-io: finish inside a fork');
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    // The scratch buffer goes back for the next writer (grown, up to 1 MiB: a larger one is let go).
    if (!WireWriter.scratch && this.buf.length >= 64 << 10 && this.buf.length <= 1 << 20) WireWriter.scratch = this.buf;
    this.pos = 0;
    return out;
  }
}

/** Thrown on bytes that are no protobuf message: cut short, a varint too long, an unknown wire type. */
export class WireFormatError extends Error {
  override name = 'WireFormatError';
}

/** Reads a message's bytes in order. */
export class WireReader {
  pos = 0;
  readonly end: number;
  private readonly buf: Buffer;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.end = this.buf.length;
  }

  private need(n: number): void {
    if (this.pos + n > this.end) {
      throw new WireFormatError(`index out of range: ${this.pos} + ${n} > ${this.end}`);
    }
  }

  /** The next `n` bytes: where they start; the reader moves past them. */
  private take(n: number): number {
    this.need(n);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  uint32(): number {
    // Most varints are one byte: a field's tag, a short length.
    if (this.pos < this.end) {
      const b = this.buf[this.pos]!;
      if (b < 0x80) {
        this.pos++;
        return b;
      }
    }
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      this.need(1);
      const b = this.buf[this.pos++]!;
      if (shift < 28) v |= (b & 0x7f) << shift;
      else v = (v >>> 0) + (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v >>> 0;
    }
    // A uint32 written as a 64-bit varint (a negative int32): the rest only continues it.
    for (let i = 0; i < 5; i++) {
      this.need(1);
      if (this.buf[this.pos++]! < 0x80) return v >>> 0;
    }
    throw new WireFormatError('invalid varint encoding');
  }

  int32(): number {
    return this.uint32() | 0;
  }

  sint32(): number {
    const v = this.uint32();
    return (v >>> 1) ^ -(v & 1);
  }

  /** A 64-bit varint as its two 32-bit halves. */
  private varint64(): [lo: number, hi: number] {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      this.need(1);
      const b = this.buf[this.pos++]!;
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32);
      if (b < 0x80) return [lo >>> 0, hi >>> 0];
    }
    throw new WireFormatError('invalid varint encoding');
  }

  uint64(): number {
    const [lo, hi] = this.varint64();
    return hi * TWO_32 + lo;
  }

  int64(): number {
    const [lo, hi] = this.varint64();
    if (hi >>> 31 === 0) return hi * TWO_32 + lo;
    // Negative: minus the two's complement.
    const nlo = (~lo + 1) >>> 0;
    const nhi = (~hi + (nlo === 0 ? 1 : 0)) >>> 0;
    return -(nhi * TWO_32 + nlo);
  }

  sint64(): number {
    const [lo, hi] = this.varint64();
    const magnitude = Math.floor((hi * TWO_32 + lo) / 2);
    return lo & 1 ? -magnitude - 1 : magnitude;
  }

  bool(): boolean {
    return this.uint32() !== 0;
  }

  fixed32(): number {
    return this.buf.readUInt32LE(this.take(4));
  }

  sfixed32(): number {
    return this.buf.readInt32LE(this.take(4));
  }

  float(): number {
    return this.buf.readFloatLE(this.take(4));
  }

  double(): number {
    return this.buf.readDoubleLE(this.take(8));
  }

  fixed64(): number {
    return Number(this.buf.readBigUInt64LE(this.take(8)));
  }

  sfixed64(): number {
    return Number(this.buf.readBigInt64LE(this.take(8)));
  }

  /** A length-delimited field's bytes: a view of the input, not a copy. */
  bytes(): Buffer {
    const n = this.uint32();
    const at = this.take(n);
    return this.buf.subarray(at, at + n);
  }

  string(): string {
    const n = this.uint32();
    const start = this.take(n);
    // Short ASCII strings (names, versions, phases) are most of a resource's: decoded here, they cost a fraction
    // of a call into Buffer's C++ decoder.
    if (n <= SHORT_STRING) {
      let s = '';
      for (let i = start; i < start + n; i++) {
        const c = this.buf[i]!;
        if (c >= 0x80) return this.buf.toString('utf8', start, start + n);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return this.buf.toString('utf8', start, start + n);
  }

  /** Steps over a field of wire type `type` this reader does not know. */
  skipType(type: number): void {
    switch (type) {
      case WireType.Varint:
        this.varint64();
        return;
      case WireType.Fixed64:
        this.take(8);
        return;
      case WireType.Delimited:
        this.take(this.uint32());
        return;
      case 3: // a group (proto2): fields until its end tag
        for (;;) {
          const tag = this.uint32();
          if ((tag & 7) === 4) return;
          this.skipType(tag & 7);
        }
      case WireType.Fixed32:
        this.take(4);
        return;
      default:
        throw new WireFormatError(`invalid wire type ${type} at offset ${this.pos}`);
    }
  }
}
