// h2-session: the client side of an HTTP/2 connection without TLS (RFC 9113), for gRPC over the plugins' unix
// socket. Node's own http2 loads its TLS and HTTP/1 stacks with it, 1.5-2.8 MiB in every plugin process (measured;
// ARCHITECTURE.md), which only ever talks plaintext to PID 1; this is the part a gRPC client uses: requests,
// responses and trailers, both flow controls, pings, GOAWAY. Its session and streams answer to the names node's do
// (events, methods), so the channel (client.ts) drives either. No server push (refused in our SETTINGS), no
// priorities.
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import {
  ConnectionError, decodeSettings, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, encodeFrame, encodeGoaway, encodeSettings,
  ErrorCode, errorName, Flag, FrameReader, FrameType, MAX_WINDOW, PREFACE, Setting, uint32, unpadded, type Frame,
} from './h2-frames.ts';
import { encodeHeaders, HpackDecoder, HpackError, type HeaderList } from './hpack.ts';

/** Received headers as node gives them: names in lower case, a repeated one as an array. */
export type Headers = Record<string, string | string[] | undefined>;

export interface H2SessionOptions {
  /** `:scheme` and `:authority` of every request, as a URL: "http://localhost". */
  authority: string;
  /** Each stream's receive window, bytes (SETTINGS_INITIAL_WINDOW_SIZE). */
  initialWindowSize?: number;
}

/** A header block (HEADERS and its CONTINUATIONs) larger than this ends the connection: nobody sends one. */
const MAX_HEADER_BLOCK = 1 << 20;

const toHeaders = (list: HeaderList): Headers => {
  const out: Headers = {};
  for (const [name, value] of list) {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
};

/** One request's stream: 'response', 'data', 'trailers', 'error', 'close', as node's ClientHttp2Stream. */
export class H2Stream extends EventEmitter {
  id = 0;
  /** Bytes this side may still send on it (the peer's window for it). */
  sendWindow: number;
  /** Bytes the peer may still send before this side says it has room. */
  receiveWindow: number;
  /** Received bytes not yet given back to the peer as window. */
  unacked = 0;
  pending: Buffer[] = [];
  endPending = false;
  localEnded = false;
  remoteEnded = false;
  responded = false;
  closedWith: number | undefined;
  paused = false;
  /** Data received while paused, and what must wait for it to be delivered (trailers, the end). */
  readonly held: Buffer[] = [];
  private readonly afterHeld: (() => void)[] = [];

  constructor(readonly session: H2Session, sendWindow: number, receiveWindow: number) {
    super();
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  get closed(): boolean { return this.closedWith !== undefined; }

  /** Sends `data` and ends this side of the stream. */
  end(data?: Uint8Array): void {
    if (this.localEnded || this.endPending || this.closed) return;
    if (data?.length) this.pending.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    this.endPending = true;
    this.session.flush();
  }

  /** Holds 'data' (and the window it would give back) until resume(). */
  pause(): void { this.paused = true; }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    while (!this.paused && this.held.length) this.emit('data', this.held.shift()!);
    while (!this.held.length && this.afterHeld.length) this.afterHeld.shift()!();
    this.session.giveBack(this);
  }

  /** Runs `fn` once the data held for a paused reader has been delivered: events keep the order they came in. */
  whenDelivered(fn: () => void): void {
    if (!this.held.length) fn();
    else this.afterHeld.push(fn);
  }

  /** Resets the stream (RST_STREAM with `code`, CANCEL unless given); 'close' follows. */
  close(code: number = ErrorCode.CANCEL): void {
    this.session.reset(this, code);
  }
}

export class H2Session extends EventEmitter {
  closed = false;
  destroyed = false;
  private readonly streams = new Map<number, H2Stream>();
  /** Streams waiting for the peer's MAX_CONCURRENT_STREAMS to let them open. */
  private readonly waiting: { stream: H2Stream; block: Buffer }[] = [];
  private nextId = 1;
  private readonly reader = new FrameReader(DEFAULT_MAX_FRAME);
  private readonly decoder = new HpackDecoder();
  private readonly scheme: string;
  private readonly authority: string;
  private readonly streamWindow: number;
  private connectionReceiveWindow = DEFAULT_WINDOW;
  private connectionUnacked = 0;
  private connectionSendWindow = DEFAULT_WINDOW;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private peerMaxStreams = Infinity;
  /** A header block being received: its stream, its flags, the fragments so far. */
  private headerBlock: { stream: number; flags: number; parts: Buffer[]; size: number } | undefined;
  private readonly pings = new Map<string, (err: Error | null) => void>();
  private pingCount = 0;
  private lastError: Error | undefined;
  /** Whether the server has sent a byte yet (an HTTP/1 server's first bytes are told apart). */
  private heard = false;
  /** The server said GOAWAY: no stream opens any more. */
  private refused = false;

  constructor(readonly socket: Socket, o: H2SessionOptions) {
    super();
    const url = new URL(o.authority);
    this.scheme = url.protocol.replace(/:$/, '');
    this.authority = url.host;
    this.streamWindow = o.initialWindowSize ?? DEFAULT_WINDOW;
    socket.write(Buffer.concat([PREFACE, encodeFrame(FrameType.SETTINGS, 0, 0, encodeSettings([
      [Setting.ENABLE_PUSH, 0], [Setting.INITIAL_WINDOW_SIZE, this.streamWindow],
    ]))]));
    const connected = () => {
      if (!this.destroyed) this.emit('connect', this, socket);
    };
    if (socket.connecting) socket.once('connect', connected);
    else process.nextTick(connected);
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', (e: Error) => this.destroy(e));
    socket.on('close', () => this.ended());
  }

  /** Opens a stream with these request headers (pseudo-headers first, as HTTP/2 wants). */
  request(headers: Record<string, string>): H2Stream {
    const stream = new H2Stream(this, this.peerInitialWindow, this.streamWindow);
    if (this.closed || this.destroyed) {
      process.nextTick(() => this.finish(stream, ErrorCode.CANCEL,
        new Error(this.destroyed ? 'the connection is gone' : 'the connection is closing (GOAWAY)')));
      return stream;
    }
    const list: HeaderList = [[':scheme', this.scheme], [':authority', this.authority]];
    for (const [k, v] of Object.entries(headers)) {
      if (k.startsWith(':')) list.unshift([k, v]);
      else list.push([k.toLowerCase(), v]);
    }
    const block = encodeHeaders(list);
    if (this.streams.size >= this.peerMaxStreams) this.waiting.push({ stream, block });
    else this.open(stream, block);
    return stream;
  }

  /** Sends PING; `done` hears of its ACK, or of the connection's end. False when the session is closed. */
  ping(done: (err: Error | null) => void): boolean {
    if (this.destroyed) return false;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(++this.pingCount, 4);
    this.pings.set(payload.toString('hex'), done);
    this.write(encodeFrame(FrameType.PING, 0, 0, payload));
    return true;
  }

  /** Gives the connection's receive window this size (a WINDOW_UPDATE for the difference). */
  setLocalWindowSize(size: number): void {
    const more = Math.min(size, MAX_WINDOW) - this.connectionReceiveWindow;
    if (more <= 0 || this.destroyed) return;
    this.connectionReceiveWindow += more;
    this.write(encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, uint32(more)));
  }

  ref(): void { this.socket.ref(); }

  unref(): void { this.socket.unref(); }

  /** No new streams; the connection ends, saying GOAWAY, when its streams have (those waiting for their turn too). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.endIfDone();
  }

  /** A closed session's last stream is done: GOAWAY (a server would refuse streams after it), then the end. */
  private endIfDone(): void {
    if (!this.closed || this.destroyed || this.streams.size || this.waiting.length) return;
    if (!this.refused) this.write(encodeFrame(FrameType.GOAWAY, 0, 0, encodeGoaway(0, ErrorCode.NO_ERROR)));
    this.socket.end();
  }

  /** Ends the connection now; every open stream fails with `err`, and the session emits it. */
  destroy(err?: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.closed = true;
    this.lastError = err;
    this.socket.destroy();
    if (err && this.listenerCount('error')) this.emit('error', err);
  }

  /** Sends what the windows allow of every stream's pending data. */
  flush(): void {
    if (this.destroyed) return;
    for (const s of this.streams.values()) {
      while (s.id && !s.closed && (s.pending.length || s.endPending)) {
        const next = s.pending[0];
        if (!next) {
          this.write(encodeFrame(FrameType.DATA, Flag.END_STREAM, s.id));
          this.localEnd(s);
          break;
        }
        const n = Math.min(next.length, s.sendWindow, this.connectionSendWindow, this.peerMaxFrame);
        if (n <= 0) break;
        const chunk = next.subarray(0, n);
        if (n === next.length) s.pending.shift();
        else s.pending[0] = next.subarray(n);
        s.sendWindow -= n;
        this.connectionSendWindow -= n;
        const last = s.endPending && !s.pending.length;
        this.write(encodeFrame(FrameType.DATA, last ? Flag.END_STREAM : 0, s.id, chunk));
        if (last) this.localEnd(s);
      }
    }
  }

  /** This side's END_STREAM went out; a stream the server had ended already is done. */
  private localEnd(s: H2Stream): void {
    s.endPending = false;
    s.localEnded = true;
    if (s.remoteEnded) this.finish(s, ErrorCode.NO_ERROR);
  }

  /** Opens the streams waiting for their turn, as far as the server's stream limit lets them. */
  private openWaiting(): void {
    while (!this.destroyed && !this.refused && this.waiting.length && this.streams.size < this.peerMaxStreams) {
      const next = this.waiting.shift()!;
      this.open(next.stream, next.block);
    }
  }

  /** Gives back the window a stream's consumed data took, once it is worth a frame. */
  giveBack(s: H2Stream): void {
    if (s.paused || s.closed || s.remoteEnded || s.unacked < this.streamWindow / 2) return;
    s.receiveWindow += s.unacked;
    this.write(encodeFrame(FrameType.WINDOW_UPDATE, 0, s.id, uint32(s.unacked)));
    s.unacked = 0;
  }

  /** RST_STREAM for a stream this side gives up. */
  reset(s: H2Stream, code: number): void {
    if (s.closed) return;
    if (s.id && !this.destroyed) this.write(encodeFrame(FrameType.RST_STREAM, 0, s.id, uint32(code)));
    const i = this.waiting.findIndex((w) => w.stream === s);
    if (i >= 0) this.waiting.splice(i, 1);
    this.finish(s, code);
  }

  private write(bytes: Buffer): void {
    // After end() (a goodbye under way) a write would be an error of its own: what is left is not wanted.
    if (this.socket.writable) this.socket.write(bytes);
  }

  private open(stream: H2Stream, block: Buffer): void {
    stream.id = this.nextId;
    this.nextId += 2;
    // A stream that waited for its turn starts from the window the server's latest SETTINGS gives.
    stream.sendWindow = this.peerInitialWindow;
    this.streams.set(stream.id, stream);
    for (let at = 0, first = true; first || at < block.length; first = false) {
      const part = block.subarray(at, at + this.peerMaxFrame);
      at += part.length;
      const last = at >= block.length;
      this.write(encodeFrame(first ? FrameType.HEADERS : FrameType.CONTINUATION, last ? Flag.END_HEADERS : 0,
        stream.id, part));
    }
    this.flush();
  }

  /** Closes a stream once: drops what it had to send, says 'error' (when given and heard), then 'close'. */
  private finish(s: H2Stream, code: number, err?: Error): void {
    if (s.closed) return;
    s.closedWith = code;
    s.pending.length = 0;
    s.endPending = false;
    if (s.id) this.streams.delete(s.id);
    const say = () => {
      if (err && s.listenerCount('error')) s.emit('error', err);
      s.emit('close');
    };
    // A response that came whole waits for its reader: 'close' after the data and trailers it holds.
    process.nextTick(() => (!err && s.remoteEnded ? s.whenDelivered(say) : say()));
    this.openWaiting();
    this.endIfDone();
  }

  private received(chunk: Buffer): void {
    try {
      if (!this.heard && chunk.subarray(0, 5).toString('latin1') === 'HTTP/') {
        const line = chunk.toString('latin1').split('\r\n', 1)[0]!.slice(0, 80);
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `it answered in HTTP/1 ("${line}"), not HTTP/2`);
      }
      this.heard = true;
      this.reader.push(chunk, (f) => this.frame(f));
    } catch (e) {
      // A frame too short for its fields throws RangeError reading them: the server's fault too.
      const theirs = e instanceof ConnectionError || e instanceof HpackError || e instanceof RangeError;
      const code = e instanceof ConnectionError ? e.code
        : e instanceof HpackError ? ErrorCode.COMPRESSION_ERROR
          : theirs ? ErrorCode.PROTOCOL_ERROR : ErrorCode.INTERNAL_ERROR;
      this.write(encodeFrame(FrameType.GOAWAY, 0, 0, encodeGoaway(0, code)));
      const why = theirs ? `the server broke the protocol (${errorName(code)})` : 'this client failed on a frame';
      this.destroy(new Error(`HTTP/2: ${why}: ${(e as Error).message}`, { cause: e }));
    }
  }

  private frame(f: Frame): void {
    if (this.headerBlock && f.type !== FrameType.CONTINUATION) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `a ${f.type} frame inside a header block`);
    }
    switch (f.type) {
      case FrameType.DATA: return this.data(f);
      case FrameType.HEADERS:
        this.headerBlock = { stream: f.stream, flags: f.flags, parts: [unpadded(f)], size: f.payload.length };
        if (f.flags & Flag.END_HEADERS) this.headers();
        return;
      case FrameType.CONTINUATION:
        if (!this.headerBlock || this.headerBlock.stream !== f.stream) {
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a CONTINUATION without its HEADERS');
        }
        this.headerBlock.parts.push(f.payload);
        this.headerBlock.size += f.payload.length;
        if (this.headerBlock.size > MAX_HEADER_BLOCK) {
          throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `a header block over ${MAX_HEADER_BLOCK} bytes`);
        }
        if (f.flags & Flag.END_HEADERS) this.headers();
        return;
      case FrameType.RST_STREAM: return this.rst(f);
      case FrameType.SETTINGS: return this.settings(f);
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a PUSH_PROMISE, though SETTINGS_ENABLE_PUSH was 0');
      case FrameType.PING: return this.pinged(f);
      case FrameType.GOAWAY: return this.goaway(f);
      case FrameType.WINDOW_UPDATE: return this.windowUpdate(f);
      default: return; // PRIORITY, and frame types this side does not know, are ignored (RFC 9113, 4.1)
    }
  }

  private data(f: Frame): void {
    if (f.stream === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on stream 0');
    const size = f.payload.length;
    this.connectionUnacked += size;
    if (this.connectionUnacked > this.connectionReceiveWindow) {
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA past the connection\'s window');
    }
    // The connection's window is given back at once: a paused stream holds back its own window only.
    if (this.connectionUnacked >= this.connectionReceiveWindow / 2) {
      this.write(encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, uint32(this.connectionUnacked)));
      this.connectionUnacked = 0;
    }
    const s = this.streams.get(f.stream);
    if (!s || s.remoteEnded) return; // reset by this side, or ended: its bytes counted, nothing more
    s.receiveWindow -= size;
    if (s.receiveWindow < 0) {
      this.write(encodeFrame(FrameType.RST_STREAM, 0, s.id, uint32(ErrorCode.FLOW_CONTROL_ERROR)));
      this.finish(s, ErrorCode.FLOW_CONTROL_ERROR, new Error('HTTP/2: the server sent past the stream\'s window'));
      return;
    }
    s.unacked += size;
    const body = unpadded(f);
    if (body.length) {
      if (s.paused || s.held.length) s.held.push(body);
      else s.emit('data', body);
    }
    if (f.flags & Flag.END_STREAM) this.remoteEnd(s);
    else this.giveBack(s);
  }

  private headers(): void {
    const { stream: id, flags, parts } = this.headerBlock!;
    this.headerBlock = undefined;
    // Decoded even for a stream that is gone: the decoder's table must see every block.
    const list = this.decoder.decode(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    const s = this.streams.get(id);
    if (!s || s.remoteEnded) return;
    const h = toHeaders(list);
    if (!s.responded) {
      const status = Number(h[':status']);
      if (status >= 100 && status < 200) return; // informational: the response is still to come
      s.responded = true;
      s.whenDelivered(() => s.emit('response', h, flags));
    } else {
      s.whenDelivered(() => s.emit('trailers', h, flags));
    }
    if (flags & Flag.END_STREAM) this.remoteEnd(s);
  }

  /** The peer ended its side. The call's outcome is complete: what this side had left to send is not wanted. */
  private remoteEnd(s: H2Stream): void {
    s.remoteEnded = true;
    s.whenDelivered(() => {
      if (s.localEnded) this.finish(s, ErrorCode.NO_ERROR);
      else this.reset(s, ErrorCode.CANCEL);
    });
  }

  private rst(f: Frame): void {
    const s = this.streams.get(f.stream);
    if (!s) return;
    const code = f.payload.length >= 4 ? f.payload.readUInt32BE(0) : ErrorCode.PROTOCOL_ERROR;
    const quiet = code === ErrorCode.NO_ERROR || code === ErrorCode.CANCEL;
    this.finish(s, code, quiet ? undefined : new Error(`the server reset the stream: ${errorName(code)}`));
  }

  private settings(f: Frame): void {
    if (f.flags & Flag.ACK) return;
    if (f.stream !== 0 || f.payload.length % 6) {
      throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'a malformed SETTINGS frame');
    }
    for (const [id, value] of decodeSettings(f.payload)) {
      if (id === Setting.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, `a window of ${value}`);
        for (const s of this.streams.values()) s.sendWindow += value - this.peerInitialWindow;
        this.peerInitialWindow = value;
      } else if (id === Setting.MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 2 ** 24 - 1) {
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `a maximum frame size of ${value}`);
        }
        this.peerMaxFrame = value;
      } else if (id === Setting.MAX_CONCURRENT_STREAMS) {
        this.peerMaxStreams = value;
      }
    }
    this.write(encodeFrame(FrameType.SETTINGS, Flag.ACK, 0));
    this.emit('remoteSettings');
    this.openWaiting();
    this.flush();
  }

  private pinged(f: Frame): void {
    if (f.payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'a PING of other than 8 bytes');
    if (!(f.flags & Flag.ACK)) {
      this.write(encodeFrame(FrameType.PING, Flag.ACK, 0, f.payload));
      return;
    }
    const key = f.payload.toString('hex');
    const done = this.pings.get(key);
    this.pings.delete(key);
    done?.(null);
  }

  private goaway(f: Frame): void {
    const last = f.payload.readUInt32BE(0) & 0x7fffffff;
    const code = f.payload.readUInt32BE(4);
    this.closed = true;
    this.refused = true;
    this.emit('goaway', code, last);
    if (code !== ErrorCode.NO_ERROR) {
      this.destroy(new Error(`the server ended the connection: ${errorName(code)}`));
      return;
    }
    // Streams the server never saw may be retried elsewhere; the ones it did still finish.
    for (const s of [...this.streams.values()]) {
      if (s.id > last) this.finish(s, ErrorCode.REFUSED_STREAM, new Error('the server went away before this call'));
    }
    for (const w of this.waiting.splice(0)) {
      this.finish(w.stream, ErrorCode.REFUSED_STREAM, new Error('the server went away before this call'));
    }
    this.endIfDone();
  }

  private windowUpdate(f: Frame): void {
    const more = f.payload.readUInt32BE(0) & 0x7fffffff;
    if (f.stream === 0) {
      if (more === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0 for the connection');
      this.connectionSendWindow += more;
      if (this.connectionSendWindow > MAX_WINDOW) {
        throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'the connection\'s window past 2^31-1');
      }
    } else {
      const s = this.streams.get(f.stream);
      if (s) s.sendWindow += more;
      // Stream errors (RFC 9113, 6.9 and 6.9.1): that stream ends, the connection lives.
      if (s && (more === 0 || s.sendWindow > MAX_WINDOW)) {
        const code = more === 0 ? ErrorCode.PROTOCOL_ERROR : ErrorCode.FLOW_CONTROL_ERROR;
        this.write(encodeFrame(FrameType.RST_STREAM, 0, s.id, uint32(code)));
        this.finish(s, code, new Error(`HTTP/2: the server broke the stream's flow control (${errorName(code)})`));
      }
    }
    this.flush();
  }

  /** The socket closed: every stream still open ends, pings are answered with the reason, then 'close'. */
  private ended(): void {
    this.destroyed = true;
    this.closed = true;
    const why = this.lastError;
    const waiting = this.waiting.splice(0);
    for (const s of [...this.streams.values()]) this.finish(s, ErrorCode.CANCEL, s.remoteEnded ? undefined : why);
    for (const w of waiting) this.finish(w.stream, ErrorCode.CANCEL, why);
    for (const done of this.pings.values()) done(why ?? new Error('the connection closed'));
    this.pings.clear();
    process.nextTick(() => this.emit('close'));
  }
}
