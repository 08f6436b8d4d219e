// machine-service: serves appliance.runtime.v1alpha1.MachineService: views read from /proc when asked
// (machinery/sys/machine-views.ts) and restarting a plugin through the supervisor.
import type { Method } from '../../cosi/remote/grpc/server.ts';
import { StateError } from '../../cosi/state/errors.ts';
import {
  MOUNTS_PATH, MOUNTS_REQUEST, MOUNTS_RESPONSE, OVERVIEW, OVERVIEW_PATH, OVERVIEW_REQUEST, PROCESSES_PATH,
  PROCESSES_REQUEST, PROCESSES_RESPONSE, RESTART_PLUGIN_PATH, RESTART_PLUGIN_REQUEST, RESTART_PLUGIN_RESPONSE,
  SOCKETS_PATH, SOCKETS_REQUEST, SOCKETS_RESPONSE,
} from '../../machinery/model/machine-service-wire.ts';
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
    [OVERVIEW_PATH, unary(async (req) => {
      OVERVIEW_REQUEST.decode(req);
      return OVERVIEW.encode(readOverview(proc));
    })],
    [PROCESSES_PATH, unary(async (req) => {
      PROCESSES_REQUEST.decode(req);
      return PROCESSES_RESPONSE.encode({
        processes: readProcesses(proc).map((p) => ({ ...p, plugin: o.pluginByPid(p.pid)?.name ?? '' })),
      });
    })],
    [MOUNTS_PATH, unary(async (req) => {
      MOUNTS_REQUEST.decode(req);
      return MOUNTS_RESPONSE.encode({ mounts: readMounts(proc) });
    })],
    [SOCKETS_PATH, unary(async (req) => {
      SOCKETS_REQUEST.decode(req);
      return SOCKETS_RESPONSE.encode({ sockets: readSockets(proc).map(({ inode: _inode, ...s }) => s) });
    })],
    [RESTART_PLUGIN_PATH, unary(async (req) => {
      const { name } = RESTART_PLUGIN_REQUEST.decode(req);
      const r = await o.restartPlugin(name);
      if (!r) throw new StateError('not-found', `no plugin "${name}"; there are: ${o.pluginNames().join(', ')}`);
      return RESTART_PLUGIN_RESPONSE.encode(r);
    })],
  ]);
}
