// api-server: the COSI API of the machine, on our gRPC server (cosi/remote/grpc).
// Users reach it over TCP, always TLS: mutual TLS once the machine has a CA (their
// role is in their certificate), a self-signed certificate and maintenance rights
// before that (api/certificate.ts decides which). Plugins reach it over a unix socket,
// where each connection is tied to the plugin whose pid SO_PEERCRED reports and may
// write only that plugin's outputs (api/plugin-socket.ts). Every call passes the role
// table (api/access.ts). Who a connection's caller is, is api/caller.ts.
import { createSecureServer, type Http2SecureServer, type Http2Session } from 'node:http2';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Native } from '../../../native/index.ts';
import { trackSessions } from '../../../cosi/remote/grpc/http2-server.ts';
import {
  GrpcError, handleGrpcStream, type CallContext, type GrpcServerOptions, type Method,
} from '../../../cosi/remote/grpc/server.ts';
import { HistogramSet } from '../../../cosi/histogram.ts';
import { Status } from '../../../cosi/remote/grpc/framing.ts';
import { stateMethods, type CallAccess, type StateServerOptions } from '../../../cosi/remote/server.ts';
import { STATE_METHODS } from '../../../cosi/remote/service.ts';
import { toStatus } from '../../../cosi/remote/status.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { Pointer } from '../../../cosi/resource/resource.ts';
import type { State } from '../../../cosi/state/state.ts';
import { throttle, type Logger } from '../../../machinery/log.ts';
import {
  callDenied, rpcRule, type Caller, MAINTENANCE_WHY, type Need,
} from '../../../machinery/model/access.ts';
import type { ApiLimits } from '../../../machinery/model/security-types.ts';
import { callerOf, callerOfConnection, describeCaller, markCaller, REFUSE_ALL } from './caller.ts';
import { openPluginSocket, type PluginIdentity } from './plugin-socket.ts';

export { callerOf, describeCaller } from './caller.ts';

/** What the users' port serves with: maintenance (self-signed, anyone) or secured (mutual TLS). */
export interface ApiTls {
  mode: 'maintenance' | 'secured';
  certificate: string;
  key: string;
  /** Secured: the CA certificates client certificates must chain to. */
  clientCAs: string[];
}

export interface ApiServerOptions {
  state: MemoryState;
  log: Logger;
  native: Native;
  /** Codecs and admission, the same for users and plugins. */
  service: Omit<StateServerOptions, 'accessOf' | 'audit'>;
  /** "host:port" for users; port 0 picks one. */
  listen: string;
  pluginSocket: string;
  /** The plugin (built-in or extension) a process is, and the types it may write. */
  pluginByPid: (pid: number) => PluginIdentity | undefined;
  /** More services for users on the same port (the machine config service), each in the role table. */
  userMethods?: ReadonlyMap<string, Method>;
  /** After a user's write went through (the machine config persists it). */
  onUserWrite?: (p: Pointer) => void;
  /** What a caller may do, per type (api/access.ts). */
  accessOf: (caller: Caller) => CallAccess;
  tls: ApiTls;
  limits: ApiLimits;
}

export interface ApiServer {
  port: number;
  /** New certificate or CAs; a switch of mode (or CAs) ends the connections it no longer admits. */
  setTls(t: ApiTls): void;
  setLimits(l: ApiLimits): void;
  /** Open watches, and how long users' unary calls took (by RPC), for the metrics endpoint. */
  stats(): { watches: number; latency: HistogramSet };
  stop(): Promise<void>;
}

/** TLS handshakes under way at once; more connections wait their turn (within the handshake time). */
const MAX_HANDSHAKES = 8;

/** How long a refused client's connection stays open to hear why. */
const REFUSED_GRACE_MS = 10_000;

export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  let tls = o.tls;
  let limits = o.limits;
  const audit = (caller: Caller | undefined, rpc: string, what: string, ok: boolean, error?: string) => {
    o.log.info(`audit: ${describeCaller(caller)} rpc=${rpc} ${what} result=${ok ? 'ok' : `denied: ${error}`}`);
  };
  const state = o.onUserWrite ? notifyingWrites(o.state, o.onUserWrite) : o.state;
  const requestLimits = () => ({
    spec: { maxYamlBytes: limits.maxSpecBytes, maxDepth: limits.maxSpecDepth }, maxLabels: limits.maxLabels,
    maxLabelBytes: limits.maxLabelBytes, maxQueryTerms: limits.maxQueryTerms,
  });
  const userState = stateMethods(state, {
    ...o.service, limits: requestLimits,
    accessOf: (ctx) => {
      const c = callerOf(ctx.session);
      return c ? o.accessOf(c) : REFUSE_ALL;
    },
    audit: (ctx, e) => audit(callerOf(ctx.session), `State/${e.rpc}`,
      `resource=${e.pointer.namespace}/${e.pointer.type}/${e.pointer.id}`, e.ok, e.error),
  });
  const watches = { total: 0, bySession: new WeakMap<Http2Session, number>() };
  const latency = new HistogramSet();
  // Maintenance mode lets anyone connect: it may read what MAINTENANCE_READABLE lists and apply a config, no more.
  const MAINTENANCE_REFUSES: readonly Need[] = ['view', 'write', 'operate', 'admin'];
  const userMethods = new Map<string, Method>();
  for (const [path, m] of [...userState, ...(o.userMethods ?? [])]) {
    const rule = rpcRule(path);
    if (!rule) throw new Error(`${path} is served to users but has no line in the role table (model/access.ts)`);
    const gate = (session: Http2Session) => {
      const caller = callerOf(session);
      const why = !caller ? 'unidentified connection' : callDenied(caller, rule)
        ?? (caller.kind === 'maintenance' && MAINTENANCE_REFUSES.includes(rule.need) ? MAINTENANCE_WHY : undefined);
      if (!why) return;
      audit(caller, path.replace(/^\/[^/]*\./, ''), '', false, why);
      throw new StateError(caller?.kind === 'refused' ? 'unauthenticated' : 'permission-denied', why);
    };
    const changesConfig = rule.need === 'apply-config' || rule.need === 'confirm-config';
    const rpcName = path.replace(/^\/[^/]*\./, '');
    if (m.kind === 'unary') {
      const handleUnary = async (req: Buffer, ctx: CallContext): Promise<Uint8Array> => {
        if (!changesConfig) return m.handle(req, ctx);
        // The machine config changes: a write, audited like the State's (whose writes stateMethods audits).
        try {
          const out = await m.handle(req, ctx);
          audit(callerOf(ctx.session), rpcName, 'resource=machine-config', true);
          return out;
        } catch (e) {
          audit(callerOf(ctx.session), rpcName, 'resource=machine-config', false, (e as Error).message);
          throw e;
        }
      };
      userMethods.set(path, {
        kind: 'unary',
        async handle(req, ctx) {
          gate(ctx.session);
          const t0 = performance.now();
          try {
            return await handleUnary(req, ctx);
          } finally {
            latency.observe(rpcName, (performance.now() - t0) / 1000);
          }
        },
      });
    } else if (path !== STATE_METHODS.Watch.path) {
      userMethods.set(path, {
        kind: 'server-stream', handle: (req, ctx, out) => {
          gate(ctx.session);
          return m.handle(req, ctx, out);
        },
      });
    } else {
      userMethods.set(path, {
        kind: 'server-stream',
        async handle(req, ctx, out) {
          gate(ctx.session);
          const mine = watches.bySession.get(ctx.session) ?? 0;
          if (mine >= limits.maxWatchesPerConnection || watches.total >= limits.maxWatches) {
            throw new GrpcError(Status.RESOURCE_EXHAUSTED, mine >= limits.maxWatchesPerConnection
              ? `at most ${limits.maxWatchesPerConnection} watches per connection (ApiLimits maxWatchesPerConnection)`
              : `the machine serves at most ${limits.maxWatches} watches (ApiLimits maxWatches)`);
          }
          watches.bySession.set(ctx.session, mine + 1);
          watches.total++;
          try {
            await m.handle(req, ctx, out);
          } finally {
            watches.total--;
            watches.bySession.set(ctx.session, (watches.bySession.get(ctx.session) ?? 1) - 1);
          }
        },
      });
    }
  }
  const grpcOptions: GrpcServerOptions = {
    methods: userMethods, maxRequestBytes: limits.maxRequestBytes, toStatus,
    buffer: { used: 0, max: limits.maxBufferedBytes },
  };

  const users: Http2SecureServer = createSecureServer({
    cert: tls.certificate, key: tls.key, ...(tls.mode === 'secured' ? { ca: tls.clientCAs } : {}),
    // Every handshake completes; a client the chain check refused is told why by each call (callerOfConnection).
    requestCert: tls.mode === 'secured', rejectUnauthorized: false, minVersion: 'TLSv1.2',
    allowHTTP1: false, settings: { maxConcurrentStreams: limits.maxStreamsPerConnection },
  });
  users.on('stream', (stream, headers) => handleGrpcStream(grpcOptions, stream, headers));
  const sessions = trackSessions(users, () => limits.idleSeconds * 1000);
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
    if (handshakes.size + sessions.size >= limits.maxConnections && !sessions.closeUnused()) {
      once('full', (more) => o.log.warn(`API: refused a connection from ${raw.remoteAddress}: `
        + `${limits.maxConnections} are open (ApiLimits maxConnections), each has made calls${more}`));
      raw.destroy();
      return;
    }
    handshakes.set(raw, {
      started: false,
      timer: setTimeout(() => {
        once('slow handshake', (more) => o.log.warn(
          `API: ${raw.remoteAddress} did not finish its TLS handshake within ${limits.handshakeSeconds} s${more}`,
        ));
        handshakeOver(raw);
        raw.destroy();
      }, limits.handshakeSeconds * 1000),
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

  const plugins = await openPluginSocket({
    state: o.state, log: o.log, native: o.native, service: o.service, path: o.pluginSocket,
    pluginByPid: o.pluginByPid,
  });
  o.log.info(`COSI API on ${o.listen.replace(/:0$/, '')}${o.listen.endsWith(':0') ? `:${port}` : ''} (TLS, `
    + `${tls.mode}), plugins on ${o.pluginSocket}`);

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
        s.close();
        setTimeout(() => {
          if (!s.destroyed) s.destroy();
        }, 2000).unref();
      }
      o.log.info(`API: now ${t.mode}${ended ? `; ended ${ended} connection(s) the new rules do not admit` : ''}`);
    },
    stats: () => ({ watches: watches.total, latency }),
    setLimits(l) {
      limits = l;
      grpcOptions.maxRequestBytes = l.maxRequestBytes;
      grpcOptions.buffer!.max = l.maxBufferedBytes;
      users.updateSettings({ maxConcurrentStreams: l.maxStreamsPerConnection });
    },
    // Open watches never finish by themselves: they are asked to end, then cut after a second.
    stop: async () => {
      front.close();
      for (const raw of handshakes.keys()) raw.destroy();
      await Promise.all([sessions.stop(users), plugins.stop()]);
    },
  };
}

/** `state`, telling `after` about each write that went through. */
function notifyingWrites(state: State, after: (p: Pointer) => void): State {
  return new Proxy(state, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      const fn = v as (...a: unknown[]) => unknown;
      switch (prop) {
        case 'create': case 'update':
          return async (r: { metadata: Pointer }, ...rest: unknown[]) => {
            const out = await fn.call(target, r, ...rest);
            after(r.metadata);
            return out;
          };
        case 'destroy': case 'teardownAndDestroy':
          return async (p: Pointer, ...rest: unknown[]) => {
            const out = await fn.call(target, p, ...rest);
            after(p);
            return out;
          };
        default: return fn.bind(target);
      }
    },
  });
}
