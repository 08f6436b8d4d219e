// netlink: the generic netlink message layer (netlink(7)): 16-byte headers,
// 4-byte aligned messages, type-length-value attributes, NLMSG_ERROR and NLMSG_DONE.
import { errnoName } from '../../native/errno.ts';

export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
export const NLM_F = {
  REQUEST: 0x1, MULTI: 0x2, ACK: 0x4, ROOT: 0x100, MATCH: 0x200, DUMP: 0x300, REPLACE: 0x100, EXCL: 0x200,
  CREATE: 0x400,
} as const;
const NLA_F_NESTED = 0x8000;
const NLA_TYPE_MASK = 0x3fff;

export const align4 = (n: number) => (n + 3) & ~3;

export interface NetlinkMessage { type: number; flags: number; seq: number; pid: number; payload: Buffer }

export class NetlinkError extends Error {
  constructor(readonly errno: number, readonly code: string, message: string, readonly request?: string) {
    super(message);
    this.name = 'NetlinkError';
  }
}

export function encodeMessage(type: number, flags: number, seq: number, payload: Buffer): Buffer {
  const len = 16 + payload.length;
  const b = Buffer.alloc(align4(len));
  b.writeUInt32LE(len, 0);
  b.writeUInt16LE(type, 4);
  b.writeUInt16LE(flags, 6);
  b.writeUInt32LE(seq, 8);
  b.writeUInt32LE(0, 12);
  payload.copy(b, 16);
  return b;
}

/** Splits a datagram into messages; a truncated one is an error naming the offset. */
export function decodeMessages(datagram: Buffer): NetlinkMessage[] {
  const out: NetlinkMessage[] = [];
  let off = 0;
  while (off + 16 <= datagram.length) {
    const len = datagram.readUInt32LE(off);
    if (len < 16 || off + len > datagram.length) {
      throw new Error(`netlink: message at offset ${off} claims ${len} bytes, datagram has ${datagram.length - off}`);
    }
    out.push({
      type: datagram.readUInt16LE(off + 4), flags: datagram.readUInt16LE(off + 6), seq: datagram.readUInt32LE(off + 8),
      pid: datagram.readUInt32LE(off + 12), payload: datagram.subarray(off + 16, off + len),
    });
    off += align4(len);
  }
  return out;
}

/** The errno of an NLMSG_ERROR (0 = an ack). */
export function errorOf(m: NetlinkMessage): number {
  return -m.payload.readInt32LE(0);
}

/**
 * The answer to request `seq` in the datagrams that came back: its messages without
 * the ack and NLMSG_DONE. A kernel error is thrown as a NetlinkError naming `what`.
 */
export function answerOf(datagrams: readonly Buffer[], seq: number, what: string): NetlinkMessage[] {
  const out: NetlinkMessage[] = [];
  for (const d of datagrams) {
    for (const m of decodeMessages(d)) {
      if (m.seq !== seq || m.type === NLMSG_DONE) continue;
      if (m.type === NLMSG_ERROR) {
        const errno = errorOf(m);
        if (errno !== 0) throw new NetlinkError(errno, errnoName(errno), `${what}: ${errnoName(errno)}`, what);
        continue; // the ack
      }
      out.push(m);
    }
  }
  return out;
}

export type Attr = { type: number; nested: boolean; value: Buffer };

export function decodeAttrs(b: Buffer): Attr[] {
  const out: Attr[] = [];
  let off = 0;
  while (off + 4 <= b.length) {
    const len = b.readUInt16LE(off);
    const raw = b.readUInt16LE(off + 2);
    if (len < 4 || off + len > b.length) break; // a truncated tail: what came before stands
    out.push({ type: raw & NLA_TYPE_MASK, nested: (raw & NLA_F_NESTED) !== 0, value: b.subarray(off + 4, off + len) });
    off += align4(len);
  }
  return out;
}

export function attrMap(b: Buffer): Map<number, Buffer> {
  return new Map(decodeAttrs(b).map((a) => [a.type, a.value]));
}

export function encodeAttr(type: number, value: Buffer): Buffer {
  const len = 4 + value.length;
  const b = Buffer.alloc(align4(len));
  b.writeUInt16LE(len, 0);
  b.writeUInt16LE(type, 2);
  value.copy(b, 4);
  return b;
}

export const attr = {
  u8: (t: number, v: number) => encodeAttr(t, Buffer.from([v])),
  u32: (t: number, v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    return encodeAttr(t, b);
  },
  str: (t: number, v: string) => encodeAttr(t, Buffer.from(`${v}\0`)),
  bytes: (t: number, v: Buffer) => encodeAttr(t, v),
  nested: (t: number, ...children: Buffer[]) => encodeAttr(t | NLA_F_NESTED, Buffer.concat(children)),
};

export const readStr = (b: Buffer | undefined) => (b ? b.toString('utf8').replace(/\0.*$/s, '') : undefined);
export const readU32 = (b: Buffer | undefined) => (b && b.length >= 4 ? b.readUInt32LE(0) : undefined);
export const readU8 = (b: Buffer | undefined) => (b && b.length >= 1 ? b[0] : undefined);
