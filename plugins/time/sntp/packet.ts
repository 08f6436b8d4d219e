// packet: the 48-byte NTP packet (RFC 5905) as SNTP (RFC 4330) uses it. Timestamps
// are 64-bit fixed point: seconds since 1900 (era 0, or era 1 after 2036), fraction.
// We carry them as milliseconds since the Unix epoch (float, sub-ms kept).

export const NTP_PACKET_SIZE = 48;
const NTP_UNIX_OFFSET_S = 2_208_988_800; // 1900-01-01 to 1970-01-01
const ERA_S = 2 ** 32;
/** Seconds values below this (1968) belong to era 1 (after 2036-02-07), as RFC 4330 3 suggests. */
const ERA1_PIVOT = 0x80000000;

export type NtpMode = 'client' | 'server' | 'broadcast' | 'other';
const MODE = { client: 3, server: 4, broadcast: 5 } as const;

export interface NtpPacket {
  leap: number; version: number; mode: NtpMode; stratum: number;
  pollLog2: number; precisionLog2: number;
  rootDelayMs: number; rootDispersionMs: number;
  /** The reference id: 4 ASCII chars for stratum 0/1 (kiss code or clock), an IPv4 address above. */
  referenceId: string;
  referenceMs: number; originateMs: number; receiveMs: number; transmitMs: number;
  /** Raw 8 bytes of the transmit timestamp: the client matches the reply's originate to these. */
  transmitRaw: Buffer;
}

export class NtpPacketError extends Error {
  constructor(message: string, readonly packet: Buffer) { super(message); }
}

export function msToNtp(ms: number): Buffer {
  const b = Buffer.alloc(8);
  const total = ms / 1000 + NTP_UNIX_OFFSET_S;
  const secs = Math.floor(total);
  b.writeUInt32BE(secs % ERA_S, 0);
  b.writeUInt32BE(Math.min(ERA_S - 1, Math.round((total - secs) * ERA_S)), 4);
  return b;
}

export function ntpToMs(b: Buffer, at = 0): number {
  const secs = b.readUInt32BE(at);
  const frac = b.readUInt32BE(at + 4);
  if (secs === 0 && frac === 0) return 0; // "unknown"
  const era = secs < ERA1_PIVOT ? ERA_S : 0;
  return (secs + era - NTP_UNIX_OFFSET_S) * 1000 + (frac / ERA_S) * 1000;
}

/** A client request: version 4, mode 3, our clock in the transmit field (the server echoes it back). */
export function encodeRequest(transmitMs: number): Buffer {
  const b = Buffer.alloc(NTP_PACKET_SIZE);
  b[0] = (0 << 6) | (4 << 3) | MODE.client;
  msToNtp(transmitMs).copy(b, 40);
  return b;
}

const shortMs = (v: number) => (v / 65536) * 1000; // NTP short format: 16.16 seconds

export function decodePacket(b: Buffer): NtpPacket {
  if (b.length < NTP_PACKET_SIZE) {
    throw new NtpPacketError(`NTP packet of ${b.length} bytes, need ${NTP_PACKET_SIZE}`, b);
  }
  const modeNum = b[0]! & 7;
  const mode: NtpMode = modeNum === MODE.client ? 'client' : modeNum === MODE.server ? 'server'
    : modeNum === MODE.broadcast ? 'broadcast' : 'other';
  const stratum = b[1]!;
  const ref = b.subarray(12, 16);
  return {
    leap: b[0]! >> 6, version: (b[0]! >> 3) & 7, mode, stratum,
    pollLog2: b.readInt8(2), precisionLog2: b.readInt8(3),
    rootDelayMs: shortMs(b.readUInt32BE(4)), rootDispersionMs: shortMs(b.readUInt32BE(8)),
    referenceId: stratum <= 1 ? ref.toString('latin1').replace(/\0+$/, '') : [...ref].join('.'),
    referenceMs: ntpToMs(b, 16), originateMs: ntpToMs(b, 24), receiveMs: ntpToMs(b, 32), transmitMs: ntpToMs(b, 40),
    transmitRaw: Buffer.from(b.subarray(40, 48)),
  };
}

export interface Sample {
  /** Add this to the local clock to get the server's. */
  offsetMs: number;
  /** Round trip minus the server's processing time. */
  delayMs: number;
  stratum: number;
  referenceId: string;
  leap: number;
}

/**
 * Checks a reply against the request it answers (RFC 4330 section 5) and computes the
 * offset and delay from the four timestamps: t1 sent, t2 server received, t3 server
 * sent, t4 received.
 */
export function sampleFromReply(reply: Buffer, request: Buffer, t1Ms: number, t4Ms: number): Sample {
  const p = decodePacket(reply);
  if (p.mode !== 'server') throw new NtpPacketError(`reply is mode ${p.mode}, not server`, reply);
  if (!reply.subarray(24, 32).equals(request.subarray(40, 48))) {
    throw new NtpPacketError('reply does not answer our request (originate timestamp differs)', reply);
  }
  if (p.stratum === 0) throw new NtpPacketError(`server sent kiss-o'-death "${p.referenceId}"`, reply);
  if (p.stratum > 15) throw new NtpPacketError(`server stratum ${p.stratum} is unsynchronized`, reply);
  if (p.leap === 3) throw new NtpPacketError('server clock is not synchronized (leap indicator 3)', reply);
  if (p.transmitMs === 0) throw new NtpPacketError('server transmit timestamp is zero', reply);
  const t2 = p.receiveMs, t3 = p.transmitMs;
  return {
    offsetMs: ((t2 - t1Ms) + (t3 - t4Ms)) / 2,
    delayMs: Math.max(0, (t4Ms - t1Ms) - (t3 - t2)),
    stratum: p.stratum, referenceId: p.referenceId, leap: p.leap,
  };
}
