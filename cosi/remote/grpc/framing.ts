// framing: gRPC's length-prefixed messages on an HTTP/2 stream (a 1-byte compressed
// flag, a 4-byte big-endian length, the message), and the status codes and header
// conventions of the gRPC over HTTP/2 protocol (grpc/doc/PROTOCOL-HTTP2.md).

/** gRPC status codes. */
export const Status = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14, DATA_LOSS: 15, UNAUTHENTICATED: 16,
} as const;
export type StatusCode = (typeof Status)[keyof typeof Status];

export const STATUS_NAME = Object.fromEntries(Object.entries(Status).map(([k, v]) => [v, k])) as Record<number, string>;

/** One message, framed. */
export function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

export class FrameError extends Error {
  constructor(readonly status: StatusCode, message: string) {
    super(message);
    this.name = 'FrameError';
  }
}

/**
 * Reassembles messages from the chunks HTTP/2 delivers. A message bigger than
 * `maxBytes` is refused before it is buffered (RESOURCE_EXHAUSTED), a compressed one
 * too (UNIMPLEMENTED: we advertise identity only).
 */
export class MessageReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxBytes: number) {}

  /** Hands `each` the complete messages this chunk finishes, in order. */
  push(chunk: Buffer, each: (message: Buffer) => void): void {
    let at = 0;
    // The usual case: nothing half-read, the chunk holds whole messages. Read in place.
    while (this.buffered === 0 && chunk.length - at >= 5) {
      const length = this.check(chunk, at);
      if (chunk.length - at < 5 + length) break;
      each(chunk.subarray(at + 5, at + 5 + length));
      at += 5 + length;
    }
    if (at === chunk.length) return;
    const rest = at ? chunk.subarray(at) : chunk;
    this.chunks.push(rest);
    this.buffered += rest.length;
    for (;;) {
      if (this.buffered < 5) return;
      const head = this.peek(5);
      const length = this.check(head, 0);
      if (this.buffered < 5 + length) return;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
      const after = all.subarray(5 + length);
      this.chunks = after.length ? [after] : [];
      this.buffered = after.length;
      each(all.subarray(5, 5 + length));
    }
  }

  /** The length of the message whose prefix starts at `at`; throws for one we do not take. */
  private check(b: Buffer, at: number): number {
    const length = b.readUInt32BE(at + 1);
    if (b[at] !== 0) {
      throw new FrameError(Status.UNIMPLEMENTED,
        'compressed messages are not accepted (grpc-accept-encoding: identity)');
    }
    if (length > this.maxBytes) {
      throw new FrameError(Status.RESOURCE_EXHAUSTED,
        `message of ${length} bytes exceeds the limit of ${this.maxBytes}`);
    }
    return length;
  }

  /** True when a message is half-read (the stream ended in the middle of one). */
  get pending(): boolean { return this.buffered > 0; }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!;
    this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0]!;
  }
}

/** grpc-timeout ("100m", "5S", "1H") -> milliseconds; undefined when absent or malformed. */
export function parseTimeout(v: string | undefined): number | undefined {
  const m = /^(\d{1,8})([HMSmun])$/.exec(v ?? '');
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };
  return n * unit[m[2]!]!;
}

/** Milliseconds -> grpc-timeout, at most 8 digits. */
export function formatTimeout(ms: number): string {
  const n = Math.max(1, Math.ceil(ms));
  return n < 1e8 ? `${n}m` : `${Math.ceil(n / 1000)}S`;
}

/** grpc-message is percent-encoded: every byte outside printable ASCII, and %. */
export function encodeGrpcMessage(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (b >= 0x20 && b <= 0x7e && b !== 0x25
    ? String.fromCharCode(b)
    : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

export function decodeGrpcMessage(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch (e) {
    if (e instanceof URIError) return s; // not percent-encoded after all: show it as sent
    throw e;
  }
}
