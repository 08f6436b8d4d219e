// client: gRPC unary and server-streaming calls over one HTTP/2 connection (TCP, or a
// unix socket for plugins). Connects on first use and again after the connection is
// lost; a refused or unreachable address fails at once with UNAVAILABLE naming why;
// deadlines travel as grpc-timeout and are enforced here too; a server that stops
// answering pings is noticed (keepalive) and every call on it fails.
// Plaintext connections (the plugins' socket) use our own HTTP/2 client (h2-session.ts); TLS ones node's http2,
// loaded on first use: loading it brings node's TLS and HTTP/1 stacks, 1.5-2.8 MiB a plugin (ARCHITECTURE.md).
import type { EventEmitter } from 'node:events';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import {
  decodeGrpcMessage, formatTimeout, frame, FrameError, MessageReader, Status, type StatusCode,
} from './framing.ts';
import { ErrorCode } from './h2-frames.ts';
import { H2Session, type Headers } from './h2-session.ts';

/** A call that ended with a status other than OK. `trailers` has what the server sent besides. */
export class GrpcCallError extends Error {
  constructor(
    readonly code: StatusCode, readonly details: string, readonly trailers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(details, options);
    this.name = 'GrpcCallError';
  }
}

/** TLS to the server: verified against `ca`, with a client certificate when given. */
export interface ChannelTls {
  /** CA certificate(s), PEM, the server's certificate must chain to. */
  ca?: string;
  /** The client certificate and its key, PEM (mutual TLS). */
  cert?: string;
  key?: string;
  /** The name (DNS or IP) the server's certificate must carry, when it is not the address dialled (a port forward). */
  serverName?: string;
  /** Skip verifying the server (a machine in maintenance mode, whose certificate is self-signed). */
  insecure?: boolean;
  /** With insecure: the server certificate's SHA-256 fingerprint (AA:BB:...) must be this one. */
  fingerprint?: string;
}

export interface ChannelOptions {
  /** TLS on a TCP address; without it the connection is plaintext (the plugins' unix socket). */
  tls?: ChannelTls;
  /** Whose HTTP/2 a plaintext connection speaks: ours (default) or node's (tests compare the two). TLS: node's. */
  http2?: 'own' | 'node';
  /** Largest response message accepted. */
  maxMessageBytes?: number;
  /** A PING every this many ms on an idle connection; no answer within `keepaliveTimeoutMs` fails its calls. */
  keepaliveMs?: number;
  keepaliveTimeoutMs?: number;
}

export interface CallOptions { deadlineMs?: number; signal?: AbortSignal }

/** A server stream: messages in order; a handler's promise pauses the stream (backpressure). */
export interface ServerStream {
  /** Called for each message; the next waits while a returned promise is pending. */
  onMessage(fn: (message: Buffer) => void | Promise<void>): void;
  /** Resolves with undefined at OK, or the error the call ended with. */
  readonly done: Promise<GrpcCallError | undefined>;
  cancel(): void;
}

/** How long a closing connection's goodbye may take before its socket is destroyed. */
const CLOSE_GRACE_MS = 1000;

/** What the channel uses of a connection: node's ClientHttp2Session and our H2Session both are one. */
interface Session extends EventEmitter {
  readonly closed: boolean;
  readonly destroyed: boolean;
  request(headers: Record<string, string>): CallStream;
  ping(done: (err: Error | null) => void): boolean;
  setLocalWindowSize(size: number): void;
  close(): void;
  destroy(err?: Error): void;
  ref(): void;
  unref(): void;
}

/** What the channel uses of a call's stream: events 'response', 'data', 'trailers', 'error', 'close'. */
interface CallStream extends EventEmitter {
  readonly session: object | undefined;
  /** Node's streams: whether every byte received was read ('end'); ours deliver everything before 'close'. */
  readonly readableEnded?: boolean;
  end(data: Uint8Array): void;
  pause(): void;
  resume(): void;
  close(code?: number): void;
}

const headerValue = (h: Headers, k: string) => {
  const v = h[k];
  return Array.isArray(v) ? v[0] : v;
};

function statusOf(h: Headers): GrpcCallError | undefined {
  const code = Number(headerValue(h, 'grpc-status') ?? NaN);
  if (code === Status.OK) return undefined;
  const extra = Object.fromEntries(Object.entries(h)
    .filter(([k]) => !k.startsWith(':') && !k.startsWith('grpc-'))
    .map(([k, v]) => [k, String(v)]));
  if (Number.isNaN(code)) {
    return new GrpcCallError(Status.INTERNAL, 'the server ended the call without a grpc-status', extra);
  }
  return new GrpcCallError(code as StatusCode, decodeGrpcMessage(headerValue(h, 'grpc-message') ?? ''), extra);
}

/** Why this client refuses a machine's certificate, by the code Node's TLS gives, with what to check. */
const NOT_THE_CA = 'is not signed by this context\'s CA: the context is for another machine, or the machine has '
  + 'another CA now';
const SERVER_CERTIFICATE_REFUSED: Record<string, string> = {
  SELF_SIGNED_CERT_IN_CHAIN: NOT_THE_CA,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: NOT_THE_CA,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: NOT_THE_CA,
  CERT_UNTRUSTED: NOT_THE_CA,
  DEPTH_ZERO_SELF_SIGNED_CERT: 'is self-signed, not signed by this context\'s CA (a machine in maintenance mode '
    + 'has one: give --insecure, and --fingerprint as its console shows)',
  CERT_HAS_EXPIRED: 'has expired, by this computer\'s clock (is it right?)',
  CERT_NOT_YET_VALID: 'is not valid yet, by this computer\'s clock (is it right?)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'does not name this address (the context\'s serverName says which name to check)',
};

export class GrpcChannel {
  private session: Session | undefined;
  private ready: Promise<Session> | undefined;
  private readonly authority: string;
  private readonly socketPath: string | undefined;
  private readonly max: number;
  private keepalive: NodeJS.Timeout | undefined;
  /** Each session's open calls: a session keeps the process alive while it has any. */
  private readonly calls = new WeakMap<Session, number>();
  /** Every socket not yet closed, a connection still being made included: `close` ends them all. */
  private readonly live = new Set<Socket>();

  /** address: "host:port", "[v6]:port" or "unix:///path/to.sock". */
  constructor(readonly address: string, private readonly o: ChannelOptions = {}) {
    this.socketPath = address.startsWith('unix://') ? address.slice('unix://'.length) : undefined;
    this.authority = this.socketPath ? 'http://localhost' : `${o.tls ? 'https' : 'http'}://${address}`;
    this.max = o.maxMessageBytes ?? 64 << 20;
  }

  private hostPort(): { host: string; port: number } {
    const colon = this.address.lastIndexOf(':');
    return { host: this.address.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(this.address.slice(colon + 1)) };
  }

  /** The connection, made if needed; rejects with UNAVAILABLE saying why it cannot be made. */
  connection(timeoutMs = 5000): Promise<Session> {
    if (this.session && !this.session.closed && !this.session.destroyed) return Promise.resolve(this.session);
    this.ready ??= new Promise<Session>((resolve, reject) => {
      let socket: Socket | undefined;
      const made = (x: Socket): Socket => {
        socket = x;
        this.live.add(x);
        x.once('close', () => this.live.delete(x));
        return x;
      };
      // Small messages go out at once (no Nagle delay waiting for an ACK).
      const plain = () => made(this.socketPath ? netConnect(this.socketPath)
        : netConnect({ ...this.hostPort(), noDelay: true }));
      const s: Session = !this.o.tls && this.o.http2 !== 'node'
        ? new H2Session(plain(), { authority: this.authority, initialWindowSize: 1 << 20 })
        : process.getBuiltinModule('node:http2').connect(this.authority, {
          createConnection: () => (this.o.tls ? made(this.tlsSocket(this.o.tls)) : plain()),
          settings: { enablePush: false, initialWindowSize: 1 << 20 },
        }) as unknown as Session;
      // `cause`: the socket's own error, so a caller can tell refused from timed out by its errno.
      const fail = (why: string, code: StatusCode = Status.UNAVAILABLE, cause?: Error) => {
        // A session destroyed before it connected only ends its socket (a handshake nobody answers keeps it).
        this.ready = undefined;
        s.destroy();
        socket?.destroy();
        const message = code === Status.UNAVAILABLE ? `cannot reach ${this.address}: ${why}` : why;
        reject(new GrpcCallError(code, message, {}, cause ? { cause } : undefined));
      };
      const timer = setTimeout(() => fail(`timed out: no connection within ${timeoutMs} ms (is the address right? `
        + 'is a firewall dropping the packets?)'), timeoutMs);
      s.once('remoteSettings', () => this.heard.add(s));
      let connected = false;
      s.once('connect', () => {
        connected = true;
        clearTimeout(timer);
        // A pinned certificate is checked before any call can send a byte (a config holds secrets).
        const pinned = this.o.tls?.insecure && this.o.tls.fingerprint;
        const got = pinned ? (socket as TLSSocket | undefined)?.getPeerX509Certificate()?.fingerprint256 : undefined;
        if (pinned && got !== pinned.toUpperCase()) {
          fail(`${this.address}: TLS: the machine's certificate fingerprint is ${got}, not ${pinned}`,
            Status.UNAUTHENTICATED);
          return;
        }
        s.setLocalWindowSize(8 << 20); // the connection's window: many streams' data in flight
        this.session = s;
        this.ready = undefined;
        s.unref(); // an idle connection does not keep a process alive; calls ref it
        this.startKeepalive(s);
        resolve(s);
      });
      // Kept after the connection is made (node's session throws an 'error' nobody hears), but then a no-op:
      // the calls on it hear of it, and a later connection's attempt is not this one's to undo.
      s.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (connected) return;
        const refused = SERVER_CERTIFICATE_REFUSED[e.code ?? ''];
        // The machine answered: this side refused its certificate. Not "unreachable": trying again will not help.
        if (refused) {
          fail(`${this.address}: TLS: the machine's certificate ${refused} (${e.code})`, Status.UNAUTHENTICATED, e);
          return;
        }
        const tls = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_CERT)/.test(e.code ?? '')
          || /certificate|TLS|SSL/.test(e.message);
        const why = tls ? `TLS: ${e.code ? `${e.code} (${e.message})` : e.message}` : this.socketWhy(e);
        fail(why, Status.UNAVAILABLE, e);
      });
      s.once('close', () => {
        if (this.session === s) {
          this.session = undefined;
          clearInterval(this.keepalive);
        }
      });
      s.on('goaway', () => {
        if (this.session === s) this.session = undefined;
      });
    });
    return this.ready;
  }

  /**
   * Why a call's connection went away. A TLS server that checks client certificates after the
   * handshake (node's) refuses one by closing the connection before a word of HTTP/2: say so.
   */
  private lostWhy(session: object | undefined, e?: Error & { code?: string }): string {
    if (e?.code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') {
      return `TLS: ${this.address} requires a client certificate (a context made by \`cosictl gen config `
        + '--secrets`), and this client sent none';
    }
    const heard = session !== undefined && this.heard.has(session);
    if (this.o.tls && !this.o.tls.insecure && !heard && (!e || e.code === 'ECONNRESET')) {
      return `TLS: ${this.address} closed the connection right after the handshake: it refused this client's `
        + 'certificate (not from the machine\'s CA, naming no role, or expired?)';
    }
    return e ? `connection to ${this.address} lost: ${e.message}`
      : `the call to ${this.address} ended without a status (the server went away?)`;
  }

  /** Why a connection could not be made, in words, with what to check: refused, DNS, unreachable. */
  private socketWhy(e: NodeJS.ErrnoException): string {
    const raw = e.code ? `${e.code} (${e.message})` : e.message;
    switch (e.code) {
      case 'ECONNREFUSED': return `refused: nothing listens there (is the machine up? the API's port is 50000 `
        + `unless its config says otherwise) [${raw}]`;
      case 'ENOTFOUND': case 'EAI_AGAIN': case 'EAI_NONAME':
        return `DNS: no address for "${this.hostPort().host}" (check its spelling, or give an IP address) [${raw}]`;
      case 'EHOSTUNREACH': case 'ENETUNREACH':
        return `unreachable: no route to the machine (is it on a network this computer reaches?) [${raw}]`;
      case 'ETIMEDOUT': return `timed out: the machine did not answer (a firewall dropping packets?) [${raw}]`;
      case 'ENOENT': return `no socket at ${this.socketPath ?? this.address} [${raw}]`;
      default: return raw;
    }
  }

  /** Sessions the server has spoken HTTP/2 on (sent its SETTINGS). */
  private readonly heard = new WeakSet<object>();

  private tlsSocket(t: ChannelTls): TLSSocket {
    const { host, port } = this.hostPort();
    const name = t.serverName ?? host;
    const { checkServerIdentity, connect: tlsConnect } = process.getBuiltinModule('node:tls');
    const socket = tlsConnect({
      host, port, ALPNProtocols: ['h2'], ...(t.ca ? { ca: t.ca } : {}), ...(t.cert ? { cert: t.cert } : {}),
      ...(t.key ? { key: t.key } : {}), rejectUnauthorized: !t.insecure,
      // SNI carries DNS names only; the certificate is checked against the name either way.
      ...(isIP(name) ? {} : { servername: name }),
      checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(name, cert),
    });
    socket.setNoDelay(true);
    return socket;
  }

  private startKeepalive(s: Session): void {
    const every = this.o.keepaliveMs;
    if (!every) return;
    const within = this.o.keepaliveTimeoutMs ?? 5000;
    clearInterval(this.keepalive);
    const interval = setInterval(() => {
      // A session that ended (its keepalive failed, the peer went) takes its pings with it: ping() would throw.
      if (s.destroyed || s.closed) {
        clearInterval(interval);
        return;
      }
      const timer = setTimeout(() => s.destroy(new Error(`no answer to a keepalive ping within ${within} ms`)), within);
      const sent = s.ping((err) => {
        clearTimeout(timer);
        if (err && !s.destroyed) s.destroy(err);
      });
      if (!sent) clearTimeout(timer);
    }, every);
    interval.unref();
    this.keepalive = interval;
  }

  waitReady(timeoutMs = 5000): Promise<void> {
    return this.connection(timeoutMs).then(() => undefined);
  }

  /**
   * Says goodbye (GOAWAY) and lets go of the connection; open streams get CLOSE_GRACE_MS to end. Then every
   * socket of the channel (one still connecting too) is destroyed: Node's session close and destroy only end
   * a socket and wait for the peer's FIN, which a peer that stopped reading (its link went down behind a
   * proxy that holds the connection open) never sends; the process would wait until TCP gives up.
   */
  close(): void {
    clearInterval(this.keepalive);
    const s = this.session;
    this.session = undefined;
    s?.close();
    const sockets = [...this.live];
    if (!sockets.length) return;
    setTimeout(() => {
      s?.destroy();
      for (const x of sockets) x.destroy();
    }, CLOSE_GRACE_MS).unref();
  }

  private async open(path: string, request: Uint8Array, o: CallOptions): Promise<CallStream> {
    const s = await this.connection();
    const open = this.calls.get(s) ?? 0;
    this.calls.set(s, open + 1);
    if (open === 0) s.ref();
    const stream = s.request({
      ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers',
      ...(o.deadlineMs ? { 'grpc-timeout': formatTimeout(o.deadlineMs) } : {}),
    });
    stream.once('close', () => {
      const left = (this.calls.get(s) ?? 1) - 1;
      this.calls.set(s, left);
      if (left === 0 && !s.destroyed) s.unref();
    });
    stream.end(frame(request));
    return stream;
  }

  /** A server stream; messages arrive through onMessage, the outcome through done. */
  serverStream(path: string, request: Uint8Array, o: CallOptions = {}): ServerStream {
    let handler: ((m: Buffer) => void | Promise<void>) | undefined;
    let finish!: (e: GrpcCallError | undefined) => void;
    const done = new Promise<GrpcCallError | undefined>((r) => {
      finish = r;
    });
    let stream: CallStream | undefined;
    let cancelled = false;
    // Messages go to the handler in order; one that returns a promise holds the next
    // (and pauses the stream) until it settles. A synchronous handler costs nothing more.
    const queue: Buffer[] = [];
    let busy = false;
    let ended = false;
    let handlerError: Error | undefined;
    let drained: (() => void) | undefined;
    const run = (m: Buffer) => {
      let p: void | Promise<void>;
      try {
        p = handler!(m);
      } catch (e) {
        handlerError = e as Error;
        queue.length = 0;
        stream?.close(ErrorCode.CANCEL);
        return;
      }
      if (p) {
        busy = true;
        stream?.pause();
        p.then(() => {
          busy = false;
          if (!ended) stream?.resume();
          pump();
        }, (e: Error) => {
          busy = false;
          handlerError = e;
          queue.length = 0;
          stream?.close(ErrorCode.CANCEL);
          pump();
        });
      }
    };
    const pump = () => {
      while (handler && !busy && queue.length) run(queue.shift()!);
      if (!busy && !queue.length) {
        const d = drained;
        drained = undefined;
        d?.();
      }
    };
    // A message that finds nobody ahead of it goes straight to the handler.
    const deliver = (m: Buffer) => {
      if (handler && !busy && !queue.length) run(m);
      else queue.push(m);
      pump();
    };
    const end = (e: GrpcCallError | undefined) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      const settle = () => finish(handlerError
        ? new GrpcCallError(Status.CANCELLED, `the message handler failed: ${handlerError.message}`)
        : e);
      if (!busy && !queue.length) settle();
      else drained = settle;
    };
    const timer = o.deadlineMs ? setTimeout(() => {
      stream?.close(ErrorCode.CANCEL);
      end(new GrpcCallError(Status.DEADLINE_EXCEEDED, `no answer within ${o.deadlineMs} ms`));
    }, o.deadlineMs) : undefined;
    this.open(path, request, o).then((st) => {
      stream = st;
      if (cancelled) {
        st.close(ErrorCode.CANCEL);
        return;
      }
      const reader = new MessageReader(this.max);
      // The stream's session, kept: a closed stream no longer has one, and lostWhy must know whether it spoke.
      const session = st.session;
      // The call's outcome once the server said it (undefined: OK), null until then. It is settled at 'close':
      // node's http2 says 'trailers' while messages a paused reader holds are still to come.
      let outcome: GrpcCallError | undefined | null = null;
      st.on('response', (h) => {
        const http = Number(h[':status']);
        if (http !== 200) {
          outcome = new GrpcCallError(Status.UNAVAILABLE, `the server answered HTTP ${http}, not gRPC`);
          return;
        }
        if (h['grpc-status'] !== undefined) {
          // Trailers-only: the outcome is final. Stop sending the rest of a large request at once
          // (a refused 10 MB request waited for the whole upload before it was reported).
          end(statusOf(h));
          st.close(ErrorCode.CANCEL);
        }
      });
      st.on('data', (chunk: Buffer) => {
        try {
          reader.push(chunk, deliver);
        } catch (e) {
          st.close(ErrorCode.CANCEL);
          end(new GrpcCallError(e instanceof FrameError ? e.status : Status.INTERNAL, (e as Error).message));
        }
      });
      st.on('trailers', (h) => {
        outcome = statusOf(h);
      });
      // A server that answered (say, RESOURCE_EXHAUSTED for a request too large) and then reset the stream
      // still sent its answer: that is the outcome, not the reset.
      st.on('error', (e: Error) => end(outcome !== null ? outcome : new GrpcCallError(
        cancelled ? Status.CANCELLED : Status.UNAVAILABLE, this.lostWhy(session, e))));
      st.on('close', () => {
        // Node's stream drops what a paused reader had not read yet when its connection goes: not an OK call.
        if (outcome === undefined && st.readableEnded === false && !cancelled) {
          end(new GrpcCallError(Status.UNAVAILABLE, `${this.lostWhy(session)}: the connection closed before `
            + 'every message was read'));
          return;
        }
        if (outcome !== null) {
          end(outcome);
          return;
        }
        end(cancelled ? new GrpcCallError(Status.CANCELLED, 'cancelled')
          : new GrpcCallError(Status.UNAVAILABLE, this.lostWhy(session)));
      });
    }, (e: GrpcCallError) => end(e));
    return {
      onMessage(fn) {
        handler = fn;
        pump();
      },
      done,
      cancel() {
        cancelled = true;
        stream?.close(ErrorCode.CANCEL);
        end(new GrpcCallError(Status.CANCELLED, 'cancelled'));
      },
    };
  }

  /** A unary call: the one response message, or a GrpcCallError. */
  unary(path: string, request: Uint8Array, o: CallOptions = {}): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const call = this.serverStream(path, request, o);
      let response: Buffer | undefined;
      call.onMessage((m) => {
        response = m;
      });
      void call.done.then((e) => {
        if (e) reject(e);
        else if (!response) reject(new GrpcCallError(Status.INTERNAL, `${path}: the server sent no response message`));
        else resolve(response);
      });
    });
  }
}
