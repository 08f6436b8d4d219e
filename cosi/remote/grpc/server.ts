// server: gRPC unary and server-streaming methods on node:http2 streams. Small on
// purpose (COSI needs no client streaming): requests are read with a size limit, a
// grpc-timeout becomes a deadline, a client's cancel aborts the handler, responses are
// framed by hand and batched into large writes (a List of 10,000 is a few dozen
// writes, not 10,000), and every outcome ends with grpc-status trailers (a
// trailers-only response when nothing was sent). Any http2 server can route its
// 'stream' events here.
import type { Http2Session, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import {
  encodeGrpcMessage, frame, FrameError, MessageReader, parseTimeout, Status, type StatusCode,
} from './framing.ts';

/** What a handler throws to answer with a status (anything else is mapped by `toStatus`). */
export class GrpcError extends Error {
  constructor(readonly code: StatusCode, message: string, readonly trailers: Record<string, string> = {}) {
    super(message);
    this.name = 'GrpcError';
  }
}

/**
 * Why a call's signal is aborted when its stream closes (a client that cancelled, or the end of every call):
 * one error for all, since an Error's stack trace was 10% of a List's cost on the server.
 */
const STREAM_CLOSED = Object.freeze(new GrpcError(Status.CANCELLED, 'cancelled by the client'));

export interface CallContext {
  /** Aborted when the client cancels, the deadline passes, or the server stops. */
  readonly signal: AbortSignal;
  readonly headers: IncomingHttpHeaders;
  /** The HTTP/2 session (connection) the call came on. */
  readonly session: Http2Session;
}

/** Where a streaming handler writes messages. write() returns a promise only when the peer is slow (backpressure). */
export interface MessageWriter {
  write(message: Uint8Array): Promise<void> | undefined;
  /** Writes a message framed already (grpc/framing.ts frame()): one framing shared by many calls. */
  writeFramed(framed: Buffer): Promise<void> | undefined;
  /** Sends what is batched and then `framed` at once, unbatched (a watch's events go out as they happen). */
  writeFramedNow(framed: Buffer): Promise<void> | undefined;
  /** Sends what is batched now. */
  flush(): Promise<void> | undefined;
}

export type Method =
  | { kind: 'unary'; handle(request: Buffer, ctx: CallContext): Promise<Uint8Array> }
  | { kind: 'server-stream'; handle(request: Buffer, ctx: CallContext, out: MessageWriter): Promise<void> };

export interface GrpcServerOptions {
  /** Methods by path (/package.Service/Method). */
  methods: ReadonlyMap<string, Method>;
  /** Largest request message accepted (bytes). */
  maxRequestBytes: number;
  /**
   * Bytes of requests being read at once, every stream together: a request that would pass it is refused
   * (RESOURCE_EXHAUSTED), so a thousand streams of 4 MiB requests cannot run the machine out of memory.
   */
  buffer?: { used: number; max: number };
  /** Maps anything a handler throws to a status, a message and extra trailers. */
  toStatus(e: unknown): { code: StatusCode; message: string; trailers?: Record<string, string> };
}

const BATCH_BYTES = 64 * 1024;
/** How much of a refused request is read and dropped before the stream is cut. */
const DROP_LIMIT = 64 << 20;

/** Ends the call on `stream` with a status: as trailers after what was sent, or trailers-only. */
export function respondStatus(
  stream: ServerHttp2Stream, code: StatusCode, message: string, trailers: Record<string, string> = {},
): void {
  if (stream.destroyed || stream.closed) return;
  const status = {
    'grpc-status': String(code), ...(message ? { 'grpc-message': encodeGrpcMessage(message) } : {}), ...trailers,
  };
  if (!stream.headersSent) {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...status }, { endStream: true });
    return;
  }
  pendingTrailers.set(stream, status);
  stream.end();
}

/** Trailers to send when the stream asks for them (respond(..., { waitForTrailers: true })). */
const pendingTrailers = new WeakMap<ServerHttp2Stream, Record<string, string>>();

function startResponse(stream: ServerHttp2Stream): void {
  if (stream.headersSent) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity' },
    { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers(pendingTrailers.get(stream) ?? { 'grpc-status': '0' }));
}

function writerFor(stream: ServerHttp2Stream): MessageWriter & { finish(): Promise<void> | undefined } {
  const batch: Buffer[] = [];
  let size = 0;
  let scheduled = false;
  /** Writes `chunk`; a promise when the peer is slow (resolved on drain or close). */
  const put = (chunk: Buffer): Promise<void> | undefined => {
    if (stream.destroyed || stream.writableEnded) return undefined;
    startResponse(stream);
    if (stream.write(chunk)) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', done);
        resolve();
      };
      stream.once('drain', done);
      stream.once('close', done);
    });
  };
  const send = (): Promise<void> | undefined => {
    scheduled = false;
    if (!batch.length) return undefined;
    const chunk = batch.length === 1 ? batch[0]! : Buffer.concat(batch, size);
    batch.length = 0;
    size = 0;
    return put(chunk);
  };
  const writeFramed = (f: Buffer) => {
    batch.push(f);
    size += f.length;
    if (size >= BATCH_BYTES) return send();
    // Whatever a handler writes in one go leaves in one write.
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => {
        if (scheduled) void send();
      });
    }
    return undefined;
  };
  return {
    writeFramed,
    writeFramedNow(f) {
      if (!batch.length) return put(f);
      batch.push(f);
      size += f.length;
      return send();
    },
    write: (message) => writeFramed(frame(message)),
    flush: send,
    finish: send,
  };
}
/** Handles one HTTP/2 stream as a gRPC call. */
/**
 * A handler's promise, or its synchronous throw as a rejection: a check that throws before the handler's first await
 * (the API's role gate) is the call's error, never the process's.
 */
function settled<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (e) {
    return Promise.reject(e);
  }
}

export function handleGrpcStream(o: GrpcServerOptions, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
  const abort = new AbortController();
  // A reset by the peer (or a failed write) ends the call: the handler sees why in its signal.
  stream.on('error', (e) => {
    if (!abort.signal.aborted) abort.abort(e);
  });
  if (headers[':method'] !== 'POST' || !String(headers['content-type'] ?? '').startsWith('application/grpc')) {
    stream.respond({ ':status': headers[':method'] !== 'POST' ? 405 : 415 }, { endStream: true });
    return;
  }
  const path = String(headers[':path'] ?? '');
  const method = o.methods.get(path);
  if (!method) {
    respondStatus(stream, Status.UNIMPLEMENTED, `unknown method ${path}`);
    return;
  }
  const encoding = headers['grpc-encoding'];
  if (encoding && encoding !== 'identity') {
    respondStatus(stream, Status.UNIMPLEMENTED, `grpc-encoding ${String(encoding)} is not supported (identity only)`,
      { 'grpc-accept-encoding': 'identity' });
    return;
  }
  const ctx: CallContext = { signal: abort.signal, headers, session: stream.session! };
  const timeout = parseTimeout(headers['grpc-timeout'] as string | undefined);
  const timer = timeout !== undefined ? setTimeout(() => {
    abort.abort(new GrpcError(Status.DEADLINE_EXCEEDED, `deadline of ${timeout} ms exceeded`));
    respondStatus(stream, Status.DEADLINE_EXCEEDED, 'deadline exceeded');
  }, timeout) : undefined;
  stream.once('close', () => {
    clearTimeout(timer);
    if (!abort.signal.aborted) abort.abort(STREAM_CLOSED);
  });

  const reader = new MessageReader(o.maxRequestBytes);
  const messages: Buffer[] = [];
  let refused: unknown;
  /** What this request holds of the shared buffer; given back when it is read (or refused, or gone). */
  let held = 0;
  const release = () => {
    if (o.buffer) o.buffer.used -= held;
    held = 0;
  };
  stream.once('close', release);
  const fail = (e: unknown) => {
    if (abort.signal.aborted && stream.closed) return;
    const s = e instanceof GrpcError ? { code: e.code, message: e.message, trailers: e.trailers }
      : e instanceof FrameError ? { code: e.status, message: e.message }
      : o.toStatus(e);
    respondStatus(stream, s.code, s.message, s.trailers);
  };
  stream.on('data', (chunk: Buffer) => {
    try {
      if (o.buffer) {
        if (o.buffer.used + chunk.length > o.buffer.max) {
          throw new GrpcError(Status.RESOURCE_EXHAUSTED, `the server is reading ${o.buffer.used} bytes of requests `
            + `already, at most ${o.buffer.max} at once: try again`);
        }
        o.buffer.used += chunk.length;
        held += chunk.length;
      }
      reader.push(chunk, (m) => messages.push(m));
    } catch (e) {
      release();
      // Answered once the request has ended: the rest is read and dropped, up to a bound. Answering at once
      // lets node close the stream, and the DATA frames still coming count as invalid until the session is
      // reset (ENHANCE_YOUR_CALM) and the client sees that instead of the answer.
      stream.removeAllListeners('data');
      let dropped = 0;
      stream.on('data', (c: Buffer) => {
        if ((dropped += c.length) > DROP_LIMIT) stream.destroy();
      });
      refused = e;
    }
  });
  stream.on('end', () => {
    release();
    if (refused) {
      fail(refused);
      return;
    }
    if (stream.closed || stream.headersSent) return;
    if (reader.pending || messages.length !== 1) {
      respondStatus(stream, Status.INVALID_ARGUMENT,
        `expected one request message, got ${messages.length}${reader.pending ? ' and a truncated one' : ''}`);
      return;
    }
    const request = messages[0]!;
    if (method.kind === 'unary') {
      settled(() => method.handle(request, ctx)).then((response) => {
        if (stream.closed || stream.destroyed) return;
        startResponse(stream);
        stream.end(frame(response));
        clearTimeout(timer);
      }, fail);
      return;
    }
    const out = writerFor(stream);
    settled(() => method.handle(request, ctx, out)).then(async () => {
      await out.finish();
      clearTimeout(timer);
      if (!stream.closed) {
        startResponse(stream);
        stream.end();
      }
    }, async (e) => {
      await out.finish();
      fail(e);
    });
  });
}
