// api-server: the COSI API of the machine, on our gRPC server (init/cosi/remote/grpc).
// Users (cosictl, any COSI client) reach it over TCP; plugins reach it over a unix
// socket, where each connection is tied to the plugin whose pid SO_PEERCRED reports
// and may write only that plugin's outputs.
import { mkdirSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Native } from '../../native/index.ts';
import { grpcHttp2Server } from '../cosi/remote/grpc/http2-server.ts';
import type { GrpcServerOptions, Method } from '../cosi/remote/grpc/server.ts';
import { stateMethods, type StateServerOptions, type WriteGuard } from '../cosi/remote/server.ts';
import { toStatus } from '../cosi/remote/status.ts';
import { StateError } from '../cosi/state/errors.ts';
import type { MemoryState } from '../cosi/state/memory-state.ts';
import type { Pointer } from '../cosi/resource/resource.ts';
import type { State } from '../cosi/state/state.ts';
import type { Logger } from '../log.ts';
import { pluginOutputs, type Plugin } from '../model/plugin.ts';

export interface ApiServerOptions {
  state: MemoryState;
  log: Logger;
  native: Native;
  /** Codecs and admission, the same for users and plugins; plugins also get a write guard. */
  service: Omit<StateServerOptions, 'guardOf'>;
  /** "host:port" for users; port 0 picks one. */
  listen: string;
  pluginSocket: string;
  pluginByPid: (pid: number) => Plugin | undefined;
  /** Largest request message (default 4 MiB). */
  maxRequestBytes?: number;
  /** More services for users on the same port (the machine config service). */
  userMethods?: ReadonlyMap<string, Method>;
  /** After a user's write went through (the machine config persists it). */
  onUserWrite?: (p: Pointer) => void;
}

export interface ApiServer { port: number; stop(): Promise<void> }

function pluginGuard(p: Plugin): WriteGuard {
  const allowed = new Set(pluginOutputs(p));
  return {
    check(type) {
      if (!allowed.has(type)) {
        throw new StateError('permission-denied',
          `plugin ${p.name} may not write ${type} (its outputs: ${[...allowed].join(', ') || 'none'})`, type);
      }
    },
  };
}

/** The plugin a connection on the plugin socket belongs to: set on the socket when it is accepted. */
const PLUGIN = Symbol('plugin');
type PluginSocket = Socket & { [PLUGIN]?: { plugin: Plugin; guard: WriteGuard } };

export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  const grpc = (guarded: boolean): GrpcServerOptions => ({
    methods: new Map([
      ...stateMethods(guarded || !o.onUserWrite ? o.state : notifyingWrites(o.state, o.onUserWrite), {
        ...o.service,
        ...(guarded ? { guardOf: (ctx) => (ctx.session.socket as PluginSocket)[PLUGIN]?.guard ?? REFUSE_ALL } : {}),
      }),
      ...(guarded ? [] : o.userMethods ?? []),
    ]),
    maxRequestBytes: o.maxRequestBytes ?? 4 << 20,
    toStatus,
  });
  const users = grpcHttp2Server(grpc(false));
  const colon = o.listen.lastIndexOf(':');
  const host = o.listen.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = await users.listen({ host, port: Number(o.listen.slice(colon + 1)) })
    .catch((e: Error) => { throw new Error(`cannot listen on ${o.listen}: ${e.message}`, { cause: e }); });

  const plugins = grpcHttp2Server(grpc(true));
  plugins.server.on('connection', (socket: PluginSocket) => {
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    try {
      const cred = o.native.peerCred(fd ?? -1);
      const plugin = o.pluginByPid(cred.pid);
      if (!plugin) {
        o.log.warn(`plugin socket: refused pid ${cred.pid} (uid ${cred.uid}): not a plugin the engine started`);
        socket.destroy();
        return;
      }
      socket[PLUGIN] = { plugin, guard: pluginGuard(plugin) };
    } catch (e) { o.log.warn(`plugin socket: cannot identify peer: ${(e as Error).message}`); socket.destroy(); }
  });
  mkdirSync(dirname(o.pluginSocket), { recursive: true, mode: 0o700 });
  rmSync(o.pluginSocket, { force: true });
  await plugins.listen({ path: o.pluginSocket });
  o.log.info(`COSI API on ${o.listen.replace(/:0$/, '')}${o.listen.endsWith(':0') ? `:${port}` : ''}, `
    + `plugins on ${o.pluginSocket}`);
  return {
    port,
    // Open watches never finish by themselves: they are asked to end, then cut after a second.
    stop: async () => { await Promise.all([users.stop(), plugins.stop()]); },
  };
}

/** A plugin-socket connection without an identity never gets this far; if one did, it may write nothing. */
const REFUSE_ALL: WriteGuard = {
  check: (type) => {
    throw new StateError('permission-denied', `an unidentified plugin connection may not write ${type}`, type);
  },
};

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
            const out = await fn.call(target, r, ...rest); after(r.metadata); return out;
          };
        case 'destroy': case 'teardownAndDestroy':
          return async (p: Pointer, ...rest: unknown[]) => {
            const out = await fn.call(target, p, ...rest); after(p); return out;
          };
        default: return fn.bind(target);
      }
    },
  });
}
