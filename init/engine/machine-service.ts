// machine-service: serves appliance.runtime.v1alpha1.MachineService: views read from /proc when asked
// (machinery/sys/machine-views.ts) and restarting a plugin through the supervisor.
import type { Method } from '../../cosi/remote/grpc/server.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { MACHINE_RPC } from '../../machinery/model/service-wire.ts';
import { readMounts, readOverview, readProcesses, readSockets } from '../../machinery/sys/machine-views.ts';

export interface MachineServiceOptions {
  /** The plugin a process is, when it is one. */
  pluginByPid(pid: number): { name: string } | undefined;
  /** undefined: no such plugin. */
  restartPlugin(name: string): Promise<{ oldPid: number } | undefined>;
  pluginNames(): string[];
  /** Where procfs is (tests). */
  proc?: string;
}

const unary = (handle: (request: Buffer) => Promise<Uint8Array>): Method => ({ kind: 'unary', handle });

export function machineServiceMethods(o: MachineServiceOptions): Map<string, Method> {
  const proc = o.proc ?? '/proc';
  return new Map<string, Method>([
    [MACHINE_RPC.overview.path, unary(async (req) => {
      MACHINE_RPC.overview.request.decode(req);
      return MACHINE_RPC.overview.response.encode(readOverview(proc));
    })],
    [MACHINE_RPC.processes.path, unary(async (req) => {
      MACHINE_RPC.processes.request.decode(req);
      return MACHINE_RPC.processes.response.encode({
        processes: readProcesses(proc).map((p) => ({ ...p, plugin: o.pluginByPid(p.pid)?.name ?? '' })),
      });
    })],
    [MACHINE_RPC.mounts.path, unary(async (req) => {
      MACHINE_RPC.mounts.request.decode(req);
      return MACHINE_RPC.mounts.response.encode({ mounts: readMounts(proc) });
    })],
    [MACHINE_RPC.sockets.path, unary(async (req) => {
      MACHINE_RPC.sockets.request.decode(req);
      return MACHINE_RPC.sockets.response.encode({ sockets: readSockets(proc).map(({ inode: _inode, ...s }) => s) });
    })],
    [MACHINE_RPC.restartPlugin.path, unary(async (req) => {
      const { name } = MACHINE_RPC.restartPlugin.request.decode(req);
      const r = await o.restartPlugin(name);
      if (!r) throw new StateError('not-found', `no plugin "${name}"; there are: ${o.pluginNames().join(', ')}`);
      return MACHINE_RPC.restartPlugin.response.encode(r);
    })],
  ]);
}
