// api-server: the COSI API of the machine, on our gRPC server (cosi/remote/grpc).
// Users reach it over TCP, always TLS: mutual TLS once the machine has a CA (their
// role is in their certificate), a self-signed certificate and maintenance rights
// before that (api/certificate.ts decides which). Plugins reach it over a unix socket,
// where each connection is tied to the plugin whose pid SO_PEERCRED reports and may
// write only that plugin's outputs (api/plugin-socket.ts). Every call passes the role
// table (api/access.ts). Who a connection's caller is, is api/caller.ts; the users' port
// (accepting, TLS, the connection limit, setTls) is api/front-door.ts.
import type { Http2Session } from 'node:http2';
import type { Native } from '../../../native/index.ts';
import { GrpcError, type CallContext, type Method } from '../../../cosi/remote/grpc/server.ts';
import { HistogramSet } from '../../../cosi/histogram.ts';
import { Status } from '../../../cosi/remote/grpc/framing.ts';
import { stateMethods, type CallAccess, type StateServerOptions } from '../../../cosi/remote/server.ts';
import { STATE_METHODS } from '../../../cosi/remote/service.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { Pointer } from '../../../cosi/resource/resource.ts';
import type { State } from '../../../cosi/state/state.ts';
import type { Logger } from '../../../machinery/log.ts';
import {
  callDenied, rpcRule, type Caller, MAINTENANCE_WHY, type Need,
} from '../../../machinery/model/access.ts';
import type { ApiLimits } from '../../../machinery/model/security-types.ts';
import { callerOf, describeCaller, REFUSE_ALL } from './caller.ts';
import { openFrontDoor, type ApiTls } from './front-door.ts';
import { openPluginSocket, type PluginIdentity } from './plugin-socket.ts';

export type { ApiTls } from './front-door.ts';
export { callerOf, describeCaller } from './caller.ts';

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

export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
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
  const door = await openFrontDoor({
    log: o.log, listen: o.listen, tls: o.tls, limits: () => limits, methods: userMethods,
  });
  const plugins = await openPluginSocket({
    state: o.state, log: o.log, native: o.native, service: o.service, path: o.pluginSocket,
    pluginByPid: o.pluginByPid,
  });
  o.log.info(`COSI API on ${o.listen.replace(/:0$/, '')}${o.listen.endsWith(':0') ? `:${door.port}` : ''} (TLS, `
    + `${o.tls.mode}), plugins on ${o.pluginSocket}`);

  return {
    port: door.port,
    setTls: (t) => door.setTls(t),
    stats: () => ({ watches: watches.total, latency }),
    setLimits(l) {
      limits = l;
      door.limitsChanged();
    },
    // Open watches never finish by themselves: they are asked to end, then cut after a second.
    stop: async () => {
      await Promise.all([door.stop(), plugins.stop()]);
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
