// der: the few ASN.1 DER encodings an X.509 certificate needs (ITU-T X.690). Each
// function returns the complete TLV; constructed values take their encoded children.
// Only encoding lives here: reading certificates is node:crypto's X509Certificate.

const TAG = {
  BOOLEAN: 0x01, INTEGER: 0x02, BIT_STRING: 0x03, OCTET_STRING: 0x04, NULL: 0x05, OID: 0x06, UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13, IA5_STRING: 0x16, UTC_TIME: 0x17, GENERALIZED_TIME: 0x18, SEQUENCE: 0x30, SET: 0x31,
} as const;

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let x = n; x > 0; x = Math.floor(x / 256)) bytes.unshift(x & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with any tag byte. */
export function tlv(tag: number, content: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const sequence = (...items: Uint8Array[]) => tlv(TAG.SEQUENCE, Buffer.concat(items));
export const set = (...items: Uint8Array[]) => tlv(TAG.SET, Buffer.concat(items));
export const octetString = (b: Uint8Array) => tlv(TAG.OCTET_STRING, b);
export const utf8String = (s: string) => tlv(TAG.UTF8_STRING, Buffer.from(s, 'utf8'));
export const ia5String = (s: string) => tlv(TAG.IA5_STRING, Buffer.from(s, 'ascii'));
export const boolean = (v: boolean) => tlv(TAG.BOOLEAN, Buffer.from([v ? 0xff : 0]));
export const nullValue = () => tlv(TAG.NULL, Buffer.alloc(0));
/** [n] EXPLICIT: a constructed context tag around one encoded value. */
export const explicit = (n: number, inner: Uint8Array) => tlv(0xa0 | n, inner);
/** [n] IMPLICIT of a primitive (SAN's dNSName [2], iPAddress [7]). */
export const implicitPrimitive = (n: number, content: Uint8Array) => tlv(0x80 | n, content);

/** A non-negative INTEGER from big-endian bytes (a leading 0 added when the high bit is set). */
export function unsignedInteger(bytes: Uint8Array): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = Buffer.from(bytes.subarray(i));
  return tlv(TAG.INTEGER, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export const smallInteger = (n: number) => {
  if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff) throw new RangeError(`DER integer out of range: ${n}`);
  const bytes: number[] = [];
  for (let x = n; x > 0; x >>>= 8) bytes.unshift(x & 0xff);
  return unsignedInteger(Buffer.from(bytes.length ? bytes : [0]));
};

/** A BIT STRING with `unused` trailing bits in the last byte. */
export const bitString = (b: Uint8Array, unused = 0) => tlv(TAG.BIT_STRING, Buffer.concat([Buffer.from([unused]), b]));

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((x) => {
    if (!/^\d+$/.test(x)) throw new Error(`not an OID: ${dotted}`);
    return Number(x);
  });
  if (arcs.length < 2) throw new Error(`not an OID: ${dotted}`);
  const out = [arcs[0]! * 40 + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const base128: number[] = [arc & 0x7f];
    for (let x = Math.floor(arc / 128); x > 0; x = Math.floor(x / 128)) base128.unshift((x & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(TAG.OID, Buffer.from(out));
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, Zulu. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-11-23T06:22:01.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = d.getUTCFullYear();
  return year < 2050 && year >= 1950
    ? tlv(TAG.UTC_TIME, Buffer.from(`${digits.slice(2)}Z`, 'ascii'))
    : tlv(TAG.GENERALIZED_TIME, Buffer.from(`${digits}Z`, 'ascii'));
}

/** One element found in DER bytes: its tag, and where its content and the whole element lie. */
export interface Element { tag: number; start: number; contentStart: number; end: number }

/** The element at `at` of `b`; throws on a truncated or indefinite-length encoding. */
export function readElement(b: Uint8Array, at = 0): Element {
  if (at + 2 > b.length) throw new Error(`DER: truncated at byte ${at}`);
  const tag = b[at]!;
  let len = b[at + 1]!;
  let contentStart = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || contentStart + n > b.length) throw new Error(`DER: bad length at byte ${at + 1}`);
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[contentStart + i]!;
    contentStart += n;
  }
  const end = contentStart + len;
  if (end > b.length) throw new Error(`DER: element at byte ${at} runs past the end`);
  return { tag, start: at, contentStart, end };
}

/** The elements inside a constructed element, in order. */
export function children(b: Uint8Array, parent: Element): Element[] {
  const out: Element[] = [];
  for (let at = parent.contentStart; at < parent.end; at = out.at(-1)!.end) out.push(readElement(b, at));
  return out;
}
