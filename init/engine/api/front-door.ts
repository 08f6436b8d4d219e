// api-front-door: the users' port. Connections are accepted here, counted against the
// connection limit, and handed to the TLS server a few at a time; each one admitted is
// marked with its caller (api/caller.ts): anyone in maintenance mode, else the user its
// certificate names, or a refused client kept open briefly to hear why on its first calls.
// setTls swaps the certificate in place and ends the connections the new rules no longer
// admit. What a call may do once in is the interceptors' business (api/interceptors.ts).
import { X509Certificate } from 'node:crypto';
import {
  constants, createSecureServer, type Http2SecureServer, type Http2Session, type ServerHttp2Stream,
} from 'node:http2';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { trackSessions } from '../../../cosi/remote/grpc/http2-server.ts';
import {
  handleGrpcStream, respondStatus, type GrpcServerOptions, type Method,
} from '../../../cosi/remote/grpc/server.ts';
import { Status } from '../../../cosi/remote/grpc/framing.ts';
import { toStatus } from '../../../cosi/remote/status.ts';
import { throttle, type Logger } from '../../../machinery/log.ts';
import type { ApiLimits } from '../../../machinery/model/security-types.ts';
import { callerOf, callerOfConnection, markCaller } from './caller.ts';

/** What the users' port serves with: maintenance (self-signed, anyone) or secured (mutual TLS). */
export interface ApiTls {
  mode: 'maintenance' | 'secured';
  certificate: string;
  key: string;
  /** Secured: the CA certificates client certificates must chain to. */
  clientCAs: string[];
}

export interface FrontDoorOptions {
  log: Logger;
  /** "host:port"; port 0 picks one. */
  listen: string;
  tls: ApiTls;
  /** Read when they apply (a connection, a handshake, an idle session): the engine's limits may change. */
  limits: () => ApiLimits;
  /** The users' methods, by path (inside the interceptors' chain). */
  methods: ReadonlyMap<string, Method>;
}

export interface FrontDoor {
  readonly port: number;
  /** New certificate or CAs; a switch of mode (or CAs) ends the connections it no longer admits. */
  setTls(t: ApiTls): void;
  /** The limits node keeps copies of (request size, bytes being read, streams per connection) take the current ones. */
  limitsChanged(): void;
  /**
   * Stops accepting; open watches are asked to end, then cut after a second. With `why` (the machine is
   * rebooting...), each streaming call ends first with UNAVAILABLE saying it: its client can tell the user.
   */
  stop(why?: string): Promise<void>;
}

/** TLS handshakes under way at once; more connections wait their turn (within the handshake time). */
const MAX_HANDSHAKES = 8;
/** How long a connection new rules no longer admit keeps its watches, and at most its unary calls. */
const STREAMS_GRACE_MS = 2000;
const UNARY_GRACE_MS = 60_000;
/** How long a refused client's connection stays open to hear why. */
const REFUSED_GRACE_MS = 10_000;

export async function openFrontDoor(o: FrontDoorOptions): Promise<FrontDoor> {
  let tls = o.tls;
  const limits = o.limits;
  const grpcOptions: GrpcServerOptions = {
    methods: o.methods, maxRequestBytes: limits().maxRequestBytes, toStatus,
    buffer: { used: 0, max: limits().maxBufferedBytes },
  };
  const users: Http2SecureServer = createSecureServer({
    cert: tls.certificate, key: tls.key, ...(tls.mode === 'secured' ? { ca: tls.clientCAs } : {}),
    // Every handshake completes; a client the chain check refused is told why by each call (callerOfConnection).
    requestCert: tls.mode === 'secured', rejectUnauthorized: false, minVersion: 'TLSv1.2',
    allowHTTP1: false, settings: { maxConcurrentStreams: limits().maxStreamsPerConnection },
  });
  // Streaming calls (watches, follows) per connection: when new rules end a connection, these are cut after a
  // moment, while its unary calls (the very ApplyConfig that brought the CA) get their answers.
  const streaming = new WeakMap<Http2Session, Set<ServerHttp2Stream>>();
  users.on('stream', (stream, headers) => {
    if (o.methods.get(String(headers[':path']))?.kind === 'server-stream' && stream.session) {
      const set = streaming.get(stream.session) ?? new Set();
      streaming.set(stream.session, set.add(stream));
      stream.once('close', () => set.delete(stream));
    }
    handleGrpcStream(grpcOptions, stream, headers);
  });
  const sessions = trackSessions(users, () => limits().idleSeconds * 1000);
  // Connections are accepted here and handed to the TLS server a few at a time: a handshake costs a
  // millisecond or two of the event loop, and a flood of them must not starve the clients already in.
  const handshakes = new Map<Socket, { timer: NodeJS.Timeout; started: boolean }>();
  const queue: Socket[] = [];
  let shaking = 0;
  const pump = () => {
    while (shaking < MAX_HANDSHAKES && queue.length) {
      const raw = queue.shift()!;
      const h = handshakes.get(raw);
      if (!h || raw.destroyed) continue;
      h.started = true;
      shaking++;
      users.emit('connection', raw);
    }
  };
  const handshakeOver = (raw: Socket) => {
    const h = handshakes.get(raw);
    if (!h) return;
    clearTimeout(h.timer);
    handshakes.delete(raw);
    if (h.started) {
      shaking--;
      pump();
    }
  };
  const once = throttle();
  const front = createNetServer((raw) => {
    raw.setNoDelay(true);
    const l = limits();
    if (handshakes.size + sessions.size >= l.maxConnections && !sessions.closeUnused()) {
      once('full', (more) => o.log.warn(`API: refused a connection from ${raw.remoteAddress}: `
        + `${l.maxConnections} are open (ApiLimits maxConnections), each has made calls${more}`));
      raw.destroy();
      return;
    }
    handshakes.set(raw, {
      started: false,
      timer: setTimeout(() => {
        once('slow handshake', (more) => o.log.warn(
          `API: ${raw.remoteAddress} did not finish its TLS handshake within ${limits().handshakeSeconds} s${more}`,
        ));
        handshakeOver(raw);
        raw.destroy();
      }, l.handshakeSeconds * 1000),
    });
    raw.once('close', () => handshakeOver(raw));
    raw.on('error', () => {}); // a reset before the TLS server owns the socket: nothing to report
    queue.push(raw);
    pump();
  });
  users.on('secureConnection', (socket: TLSSocket) => {
    // node keeps the raw socket as the TLS socket's _parent: the handshake is over for it.
    const raw = (socket as unknown as { _parent?: Socket })._parent;
    if (raw) handshakeOver(raw);
    if (tls.mode === 'maintenance') {
      markCaller(socket, { kind: 'maintenance', subject: `${socket.remoteAddress}:${socket.remotePort}` });
      return;
    }
    const who = callerOfConnection(socket);
    markCaller(socket, who);
    if (who.kind === 'refused') {
      once('refused', (more) => o.log.warn(`API: refused ${socket.remoteAddress}: ${who.why}${more}`));
      // Long enough to answer its first calls with why; it may do nothing else.
      setTimeout(() => socket.destroy(), REFUSED_GRACE_MS).unref();
    }
  });
  users.on('tlsClientError', (e: Error & { code?: string }, socket: TLSSocket) => {
    const why = e.code ?? e.message;
    once(`handshake ${why}`, (more) => o.log.info(`API: TLS handshake with ${socket.remoteAddress ?? 'a client'} `
      + `failed: ${why}${more}`));
  });
  const colon = o.listen.lastIndexOf(':');
  const host = o.listen.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = await new Promise<number>((resolve, reject) => {
    front.once('error', reject);
    front.listen(Number(o.listen.slice(colon + 1)), host, () => {
      front.off('error', reject);
      resolve((front.address() as { port: number }).port);
    });
  }).catch((e: Error) => { throw new Error(`cannot listen on ${o.listen}: ${e.message}`, { cause: e }); });

  return {
    port,
    setTls(t) {
      const before = tls;
      tls = t;
      users.setSecureContext({
        cert: t.certificate, key: t.key, ...(t.mode === 'secured' ? { ca: t.clientCAs } : {}),
      });
      // Read per connection by node's TLS server: what new connections must show.
      const server = users as unknown as { requestCert: boolean };
      server.requestCert = t.mode === 'secured';
      if (before.mode === t.mode && before.clientCAs.join() === t.clientCAs.join()) return;
      // Connections admitted under the old rules that the new ones would not admit end: the calls under way
      // (the very ApplyConfig that brought the CA) may finish, new ones go elsewhere, a watch is cut after a while.
      const cas = t.clientCAs.map((pem) => new X509Certificate(pem));
      let ended = 0;
      for (const s of sessions.all()) {
        const c = callerOf(s);
        const peer = (s.socket as unknown as TLSSocket).getPeerX509Certificate?.();
        const keep = t.mode === 'secured' && c?.kind === 'user' && peer && cas.some((ca) => peer.checkIssued(ca)
          && peer.verify(ca.publicKey));
        if (keep) continue;
        ended++;
        s.close(); // no new calls; destroyed by node once the calls under way end
        setTimeout(() => {
          for (const stream of streaming.get(s) ?? []) stream.close(constants.NGHTTP2_CANCEL);
        }, STREAMS_GRACE_MS).unref();
        setTimeout(() => {
          if (!s.destroyed) s.destroy();
        }, UNARY_GRACE_MS).unref();
      }
      o.log.info(`API: now ${t.mode}${ended ? `; ended ${ended} connection(s) the new rules do not admit` : ''}`);
    },
    limitsChanged() {
      const l = limits();
      grpcOptions.maxRequestBytes = l.maxRequestBytes;
      grpcOptions.buffer!.max = l.maxBufferedBytes;
      users.updateSettings({ maxConcurrentStreams: l.maxStreamsPerConnection });
    },
    async stop(why) {
      front.close();
      for (const raw of handshakes.keys()) raw.destroy();
      if (why) {
        for (const s of sessions.all()) for (const stream of streaming.get(s) ?? []) {
          respondStatus(stream, Status.UNAVAILABLE, why);
        }
      }
      await sessions.stop(users);
    },
  };
}
