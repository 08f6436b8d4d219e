// api-server: the COSI API of the machine, on our gRPC server (cosi/remote/grpc).
// Users reach it over TCP, always TLS: mutual TLS once the machine has a CA (their
// role is in their certificate), a self-signed certificate and maintenance rights
// before that (api/certificate.ts decides which). Plugins reach it over a unix socket,
// where each connection is tied to the plugin whose pid SO_PEERCRED reports and may
// write only that plugin's outputs. Every user call passes the role table (api/access.ts).
// This file puts the pieces together: the front door (api/front-door.ts) serves the
// users' methods inside the interceptors' chain (api/interceptors.ts), and the plugin
// socket (api/plugin-socket.ts) serves the State to plugins.
import type { Native } from '../../../native/index.ts';
import type { HistogramSet } from '../../../cosi/histogram.ts';
import type { Method } from '../../../cosi/remote/grpc/server.ts';
import {
  stateMethods, type CallAccess, type RequestLimits, type StateServerOptions,
} from '../../../cosi/remote/server.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { Pointer } from '../../../cosi/resource/resource.ts';
import type { State } from '../../../cosi/state/state.ts';
import type { Logger } from '../../../machinery/log.ts';
import type { Caller } from '../../../machinery/model/access.ts';
import type { ApiLimits } from '../../../machinery/model/security-types.ts';
import { openFrontDoor, type ApiTls } from './front-door.ts';
import { interceptUserMethods, userAccess } from './interceptors.ts';
import { openPluginSocket, type PluginIdentity } from './plugin-socket.ts';

export type { ApiTls } from './front-door.ts';
export { callerOf, describeCaller } from './caller.ts';

export interface ApiServerOptions {
  state: MemoryState;
  log: Logger;
  native: Native;
  /** Codecs and admission, the same for users and plugins. */
  service: Omit<StateServerOptions, 'accessOf'>;
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
  /** Where the audit lines go (default: the log). */
  audit?: (line: string, ok: boolean) => void;
}

export interface ApiServer {
  port: number;
  /** New certificate or CAs; a switch of mode (or CAs) ends the connections it no longer admits. */
  setTls(t: ApiTls): void;
  setLimits(l: ApiLimits): void;
  /** Open watches, and how long users' unary calls took (by RPC), for the metrics endpoint. */
  stats(): { watches: number; latency: HistogramSet };
  /** Stops serving; `why` (the machine is rebooting...) is what open watches end with. */
  stop(why?: string): Promise<void>;
}

export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  let limits = o.limits;
  const currentLimits = () => limits;
  const state = o.onUserWrite ? notifyingWrites(o.state, o.onUserWrite) : o.state;
  const userState = stateMethods(state, {
    ...o.service, limits: () => requestLimits(limits), accessOf: userAccess(o.accessOf),
  });
  const calls = interceptUserMethods([...userState, ...(o.userMethods ?? [])], {
    log: o.log, limits: currentLimits, ...(o.audit ? { audit: o.audit } : {}),
  });
  const door = await openFrontDoor({
    log: o.log, listen: o.listen, tls: o.tls, limits: currentLimits, methods: calls.methods,
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
    stats: () => ({ watches: calls.watches(), latency: calls.latency }),
    setLimits(l) {
      limits = l;
      door.limitsChanged();
    },
    // Open watches never finish by themselves: they are asked to end, then cut after a second.
    stop: async (why) => {
      await Promise.all([door.stop(why), plugins.stop()]);
    },
  };
}

/** What a user's resource and query may be, from the API's limits. */
function requestLimits(l: ApiLimits): RequestLimits {
  return {
    spec: { maxYamlBytes: l.maxSpecBytes, maxDepth: l.maxSpecDepth }, maxLabels: l.maxLabels,
    maxLabelBytes: l.maxLabelBytes, maxQueryTerms: l.maxQueryTerms,
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
