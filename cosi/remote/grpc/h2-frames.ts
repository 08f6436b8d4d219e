// h2-frames: HTTP/2's frames (RFC 9113, section 4 and 6): the 9-byte header, the types, flags, settings and error
// codes a client meets, and a reader that cuts a byte stream into frames.

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = {
  DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7,
  WINDOW_UPDATE: 8, CONTINUATION: 9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export const Setting = {
  HEADER_TABLE_SIZE: 1, ENABLE_PUSH: 2, MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_FRAME_SIZE: 5,
  MAX_HEADER_LIST_SIZE: 6,
} as const;

export const ErrorCode = {
  NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, FLOW_CONTROL_ERROR: 3, SETTINGS_TIMEOUT: 4, STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6, REFUSED_STREAM: 7, CANCEL: 8, COMPRESSION_ERROR: 9, CONNECT_ERROR: 10,
  ENHANCE_YOUR_CALM: 11, INADEQUATE_SECURITY: 12, HTTP_1_1_REQUIRED: 13,
} as const;

const ERROR_NAMES = Object.fromEntries(Object.entries(ErrorCode).map(([k, v]) => [v, k])) as Record<number, string>;

/** An error code by its name (unknown ones by number, as the RFC says to treat them: INTERNAL_ERROR). */
export const errorName = (code: number) => ERROR_NAMES[code] ?? `error code ${code}`;

/** The defaults every connection starts from (RFC 9113, 6.5.2). */
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME = 16_384;
/** Flow-control windows may not pass this (RFC 9113, 6.9.1). */
export const MAX_WINDOW = 2 ** 31 - 1;

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** One frame's bytes. */
export function encodeFrame(
  type: number, flags: number, stream: number, payload: Uint8Array = Buffer.alloc(0),
): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream & 0x7fffffff, 5);
  out.set(payload, 9);
  return out;
}

/** A SETTINGS frame's payload. */
export function encodeSettings(settings: readonly (readonly [number, number])[]): Buffer {
  const out = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    out.writeUInt16BE(id, 6 * i);
    out.writeUInt32BE(value, 6 * i + 2);
  });
  return out;
}

export function decodeSettings(payload: Buffer): [number, number][] {
  const out: [number, number][] = [];
  for (let at = 0; at + 6 <= payload.length; at += 6) {
    out.push([payload.readUInt16BE(at), payload.readUInt32BE(at + 2)]);
  }
  return out;
}

/** A 32-bit payload: WINDOW_UPDATE's increment, RST_STREAM's error code. */
export function uint32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}

/** A GOAWAY payload: the last stream this side processed, an error code. */
export function encodeGoaway(lastStream: number, code: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeUInt32BE(lastStream & 0x7fffffff, 0);
  out.writeUInt32BE(code, 4);
  return out;
}

/** A frame that breaks the connection's rules: the connection ends with `code`. */
export class ConnectionError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** Cuts received bytes into frames; a frame over `maxFrameSize` is a FRAME_SIZE_ERROR. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameSize = DEFAULT_MAX_FRAME) {}

  push(chunk: Buffer, each: (frame: Frame) => void): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buf.length >= 9) {
      const length = buf.readUIntBE(0, 3);
      if (length > this.maxFrameSize) {
        throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR,
          `a frame of ${length} bytes (at most ${this.maxFrameSize})`);
      }
      if (buf.length < 9 + length) break;
      const stream = buf.readUInt32BE(5) & 0x7fffffff;
      each({ type: buf[3]!, flags: buf[4]!, stream, payload: buf.subarray(9, 9 + length) });
      buf = buf.subarray(9 + length);
    }
    this.pending = buf;
  }
}

/** A DATA or HEADERS payload without its padding (PADDED) and, for HEADERS, its priority fields. */
export function unpadded(f: Frame): Buffer {
  let p = f.payload;
  let pad = 0;
  if (f.flags & Flag.PADDED) {
    if (!p.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a padded frame without its pad length');
    pad = p[0]!;
    p = p.subarray(1);
  }
  if (f.type === FrameType.HEADERS && f.flags & Flag.PRIORITY) p = p.subarray(5);
  if (pad > p.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `padding of ${pad} bytes past the frame`);
  return p.subarray(0, p.length - pad);
}
