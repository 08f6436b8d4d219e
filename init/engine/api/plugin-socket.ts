// api-plugin-socket: the State for plugins, on a unix socket. Each connection is tied to
// the plugin whose pid SO_PEERCRED reports (the native addon reads it), or refused; a
// plugin may write its declared outputs only, and an extension only as its own owner.
// Plugins are the machine's own: no role table, audit or quota stands between them and
// the State, only this guard.
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Native } from '../../../native/index.ts';
import { grpcHttp2Server } from '../../../cosi/remote/grpc/http2-server.ts';
import { stateMethods, type CallAccess, type StateServerOptions } from '../../../cosi/remote/server.ts';
import { toStatus } from '../../../cosi/remote/status.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import type { State } from '../../../cosi/state/state.ts';
import type { Logger } from '../../../machinery/log.ts';
import { markCaller, REFUSE_ALL } from './caller.ts';

/** A plugin (built-in or extension) as the supervisor started it: the types it may write. */
export interface PluginIdentity { name: string; outputs: readonly string[]; owner?: string }

export interface PluginSocketOptions {
  state: State;
  log: Logger;
  native: Native;
  /** Codecs and admission, as for users. */
  service: Omit<StateServerOptions, 'accessOf'>;
  path: string;
  /** The plugin a process is, if the engine started it. */
  pluginByPid: (pid: number) => PluginIdentity | undefined;
}

export interface PluginSocket {
  /** Stops listening; open watches are asked to end, then cut after a second. */
  stop(): Promise<void>;
}

type Guarded = { guard?: CallAccess };

export async function openPluginSocket(o: PluginSocketOptions): Promise<PluginSocket> {
  const plugins = grpcHttp2Server({
    methods: stateMethods(o.state, {
      ...o.service, accessOf: (ctx) => (ctx.session.socket as unknown as Guarded).guard ?? REFUSE_ALL,
    }),
    maxRequestBytes: 64 << 20, toStatus,
  });
  plugins.server.on('connection', (socket: Socket & Guarded) => {
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    try {
      const cred = o.native.peerCred(fd ?? -1);
      const plugin = o.pluginByPid(cred.pid);
      if (!plugin) {
        // A plugin stopped (a shutdown, a restart) after it connected is gone by the time its connection is
        // accepted: nothing to warn of. A process that is there and not ours is.
        const gone = !existsSync(`/proc/${cred.pid}`);
        const said = `plugin socket: refused pid ${cred.pid} (uid ${cred.uid}): `;
        if (gone) o.log.info(`${said}it has exited since it connected`);
        else o.log.warn(`${said}not a plugin the engine started`);
        socket.destroy();
        return;
      }
      markCaller(socket, { kind: 'plugin', name: plugin.name });
      socket.guard = pluginGuard(plugin, new Set(plugin.outputs));
    } catch (e) {
      o.log.warn(`plugin socket: cannot identify peer: ${(e as Error).message}`);
      socket.destroy();
    }
  });
  mkdirSync(dirname(o.path), { recursive: true, mode: 0o700 });
  rmSync(o.path, { force: true });
  await plugins.listen({ path: o.path });
  // Extensions run as uids of their own and must be able to connect; who may talk is decided by pid (above).
  chmodSync(o.path, 0o666);
  return { stop: () => plugins.stop() };
}

/** A plugin writes its outputs only; one with an `owner` (an extension) writes as that owner only. */
function pluginGuard(p: { name: string; owner?: string }, outputs: ReadonlySet<string>): CallAccess {
  return {
    read: () => {},
    write(w) {
      if (w.finalizersOnly) return;
      if (!outputs.has(w.type)) {
        throw new StateError('permission-denied',
          `plugin ${p.name} may not write ${w.type} (its outputs: ${[...outputs].join(', ') || 'none'})`, w.type);
      }
      if (p.owner !== undefined && w.owner !== p.owner) {
        throw new StateError('permission-denied',
          `plugin ${p.name} writes as owner "${p.owner}", not "${w.owner}"`, w.type);
      }
    },
  };
}
