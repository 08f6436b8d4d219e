// resource-types: the namespaces and types the engine itself serves. Plugins'
// types are defined next to their controllers (plugins/*/types.ts).
import type { DefinitionInput } from '../cosi/meta/definition.ts';

export const RUNTIME_NS = 'runtime';
export const CONFIG_NS = 'config';

export const NAMESPACES: Record<string, string> = {
  [RUNTIME_NS]: 'Observed state: what the engine and the plugins report.',
  [CONFIG_NS]: 'Desired state: what users and the machine config declare.',
};

export const VERSION_TYPE = 'Versions.runtime.appliance.dev';
export const BOOT_STATUS_TYPE = 'BootStatuses.runtime.appliance.dev';
export const PLUGIN_STATUS_TYPE = 'PluginStatuses.runtime.appliance.dev';
export const KERNEL_CMDLINE_TYPE = 'KernelCmdlines.runtime.appliance.dev';
export const POWER_REQUEST_TYPE = 'PowerRequests.runtime.appliance.dev';

export interface VersionSpec { version: string; commit: string; node: string; kernel: string; arch: string }
export interface BootStatusSpec { phase: 'booting' | 'running' | 'stopping'; ready: boolean; readyUptimeSeconds?: number }
export interface PluginStatusSpec {
  state: 'starting' | 'running' | 'backoff' | 'stopped';
  pid: number;
  restarts: number;
  outputs: string[];
  lastExit?: { code: number | null; signal: string | null; at: string };
  /** The wait before the latest restart (grows x1.5 per crash, up to 60 s). */
  backoffMs?: number;
}
export interface KernelCmdlineSpec { raw: string; params: Record<string, string> }
/** Declared by a user (cosictl apply): the engine powers the machine off or reboots it, gracefully. */
export interface PowerRequestSpec { action: 'poweroff' | 'reboot' | 'halt' }

export const ENGINE_TYPES: DefinitionInput[] = [
  {
    type: VERSION_TYPE, defaultNamespace: RUNTIME_NS,
    printColumns: [{ name: 'Appliance', jsonPath: '{.version}' }, { name: 'Commit', jsonPath: '{.commit}' }, { name: 'Kernel', jsonPath: '{.kernel}' }],
  },
  {
    type: BOOT_STATUS_TYPE, defaultNamespace: RUNTIME_NS,
    printColumns: [{ name: 'Phase', jsonPath: '{.phase}' }, { name: 'Ready', jsonPath: '{.ready}' }],
  },
  {
    type: PLUGIN_STATUS_TYPE, defaultNamespace: RUNTIME_NS, aliases: ['plugins'],
    printColumns: [{ name: 'State', jsonPath: '{.state}' }, { name: 'PID', jsonPath: '{.pid}' }, { name: 'Restarts', jsonPath: '{.restarts}' }],
  },
  {
    type: KERNEL_CMDLINE_TYPE, defaultNamespace: RUNTIME_NS, aliases: ['cmdline'],
    printColumns: [{ name: 'Cmdline', jsonPath: '{.raw}' }],
  },
  {
    type: POWER_REQUEST_TYPE, defaultNamespace: CONFIG_NS,
    printColumns: [{ name: 'Action', jsonPath: '{.action}' }],
    schema: { type: 'object', required: ['action'], properties: { action: { type: 'string', enum: ['poweroff', 'reboot', 'halt'] } } },
  },
];
