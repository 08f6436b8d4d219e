// api-server: the COSI API of the machine. Users (cosictl, any COSI client) reach it
// over TCP; plugins reach it over a unix socket, where each connection is tied to
// the plugin whose pid SO_PEERCRED reports and may write only that plugin's outputs.
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Native } from '../../native/index.ts';
import { createStateService, type StateServerOptions, type WriteGuard } from '../cosi/remote/server.ts';
import { stateServiceDefinition } from '../cosi/remote/service.ts';
import { StateError } from '../cosi/state/errors.ts';
import type { MemoryState } from '../cosi/state/memory-state.ts';
import type { Logger } from '../log.ts';
import { pluginOutputs, type Plugin } from '../model/plugin.ts';

export interface ApiServerOptions {
  state: MemoryState;
  log: Logger;
  native: Native;
  /** Codecs and admission, the same for users and plugins; plugins also get a write guard. */
  service: Omit<StateServerOptions, 'guard'>;
  /** "host:port" for users; port 0 picks one. */
  listen: string;
  pluginSocket: string;
  pluginByPid: (pid: number) => Plugin | undefined;
}

export interface ApiServer { port: number; stop(): Promise<void> }

function pluginGuard(p: Plugin): WriteGuard {
  const allowed = new Set(pluginOutputs(p));
  return {
    check(type) {
      if (!allowed.has(type)) throw new StateError('permission-denied', `plugin ${p.name} may not write ${type} (its outputs: ${[...allowed].join(', ') || 'none'})`, type);
    },
  };
}

export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  const publicServer = new Server();
  publicServer.addService(stateServiceDefinition, createStateService(o.state, o.service));
  const port = await new Promise<number>((resolve, reject) => publicServer.bindAsync(o.listen, ServerCredentials.createInsecure(), (e, p) => (e ? reject(new Error(`cannot listen on ${o.listen}: ${e.message}`)) : resolve(p))));

  // One gRPC server per plugin, fed only the connections of that plugin's process.
  const perPlugin = new Map<string, { server: Server; inject: (s: Socket) => void }>();
  const injectorFor = (p: Plugin) => {
    let entry = perPlugin.get(p.name);
    if (!entry) {
      const server = new Server();
      server.addService(stateServiceDefinition, createStateService(o.state, { ...o.service, guard: pluginGuard(p) }));
      const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
      entry = { server, inject: (s) => injector.injectConnection(s) };
      perPlugin.set(p.name, entry);
    }
    return entry;
  };

  mkdirSync(dirname(o.pluginSocket), { recursive: true, mode: 0o700 });
  rmSync(o.pluginSocket, { force: true });
  const unixServer: NetServer = createServer((socket) => {
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    let plugin: Plugin | undefined;
    try {
      const cred = o.native.peerCred(fd ?? -1);
      plugin = o.pluginByPid(cred.pid);
      if (!plugin) { o.log.warn(`plugin socket: refused pid ${cred.pid} (uid ${cred.uid}): not a plugin the engine started`); socket.destroy(); return; }
    } catch (e) { o.log.warn(`plugin socket: cannot identify peer: ${(e as Error).message}`); socket.destroy(); return; }
    injectorFor(plugin).inject(socket);
  });
  await new Promise<void>((resolve, reject) => { unixServer.once('error', reject); unixServer.listen(o.pluginSocket, () => resolve()); });
  o.log.info(`COSI API on ${o.listen.replace(/:0$/, '')}${o.listen.endsWith(':0') ? `:${port}` : ''}, plugins on ${o.pluginSocket}`);

  return {
    port,
    async stop() {
      unixServer.close();
      // Open watches never finish by themselves: give calls a moment, then cut them.
      await Promise.all([publicServer, ...[...perPlugin.values()].map((e) => e.server)].map((s) => new Promise<void>((r) => {
        const force = setTimeout(() => { s.forceShutdown(); r(); }, 1000);
        s.tryShutdown(() => { clearTimeout(force); r(); });
      })));
    },
  };
}
