// runtime-types: the namespaces and types the engine itself serves (proto/appliance/
// runtime, and the API's security types of security-types.ts). Plugins read some of
// them (the kernel command line, the version), so they live here, below both. Plugins'
// own types are defined next to their controllers.
import type { DefinitionInput } from '../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { SECURITY_NAMESPACES, SECURITY_TYPES } from './security-types.ts';

export type {
  BootStatusSpec, ConfigChange, ConfigState, ConfigStatusSpec, IssueSpec, KernelCmdlineSpec, PluginStatusSpec,
  InstallRequestSpec, InstallStatusSpec, PowerAction, PowerRequestSpec, VersionSpec,
} from '../../proto/gen/spec-types.ts';

export const RUNTIME_NS = 'runtime';
export const CONFIG_NS = 'config';

export const NAMESPACES: Record<string, string> = {
  [RUNTIME_NS]: 'Observed state: what the engine and the plugins report.',
  [CONFIG_NS]: 'Desired state: what users and the machine config declare.',
  ...SECURITY_NAMESPACES,
};

export const VERSION_TYPE = 'Versions.runtime.appliance.dev';
export const BOOT_STATUS_TYPE = 'BootStatuses.runtime.appliance.dev';
export const PLUGIN_STATUS_TYPE = 'PluginStatuses.runtime.appliance.dev';
export const KERNEL_CMDLINE_TYPE = 'KernelCmdlines.runtime.appliance.dev';
export const POWER_REQUEST_TYPE = 'PowerRequests.runtime.appliance.dev';
export const CONFIG_STATUS_TYPE = 'ConfigStatuses.runtime.appliance.dev';
export const INSTALL_REQUEST_TYPE = 'InstallRequests.runtime.appliance.dev';
export const INSTALL_STATUS_TYPE = 'InstallStatuses.runtime.appliance.dev';
/** The id of the one ConfigStatus. */
export const CONFIG_STATUS_ID = 'machine';

export const ENGINE_TYPES: DefinitionInput[] = [
  {
    type: VERSION_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.VersionSpec, access: 'controllers',
    printColumns: [
      { name: 'Appliance', jsonPath: '{.version}' }, { name: 'Commit', jsonPath: '{.commit}' },
      { name: 'Kernel', jsonPath: '{.kernel}' },
    ],
  },
  {
    type: BOOT_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.BootStatusSpec, access: 'controllers',
    printColumns: [
      { name: 'Phase', jsonPath: '{.phase}' }, { name: 'Ready', jsonPath: '{.ready}' },
      { name: 'Ready At', jsonPath: '{.readyUptimeSeconds}' },
    ],
  },
  {
    type: PLUGIN_STATUS_TYPE, defaultNamespace: RUNTIME_NS, aliases: ['plugins'], access: 'controllers',
    protoMessage: MESSAGES.PluginStatusSpec,
    printColumns: [
      { name: 'State', jsonPath: '{.state}' }, { name: 'PID', jsonPath: '{.pid}' },
      { name: 'Restarts', jsonPath: '{.restarts}' },
    ],
  },
  {
    type: KERNEL_CMDLINE_TYPE, defaultNamespace: RUNTIME_NS, aliases: ['cmdline'], access: 'controllers',
    protoMessage: MESSAGES.KernelCmdlineSpec,
    printColumns: [{ name: 'Cmdline', jsonPath: '{.raw}' }],
  },
  {
    type: POWER_REQUEST_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.PowerRequestSpec, ephemeral: true,
    printColumns: [{ name: 'Action', jsonPath: '{.action}' }],
  },
  {
    type: CONFIG_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.ConfigStatusSpec,
    access: 'controllers',
    printColumns: [
      { name: 'State', jsonPath: '{.state}' }, { name: 'Source', jsonPath: '{.source}' },
      { name: 'Resources', jsonPath: '{.resources}' }, { name: 'Persisted', jsonPath: '{.persistedTo}' },
    ],
  },
  {
    // Writes a whole disk: admins only. A request, not config: never persisted.
    type: INSTALL_REQUEST_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.InstallRequestSpec,
    ephemeral: true, access: 'admin',
    printColumns: [
      { name: 'Path', jsonPath: '{.disk.path}' }, { name: 'Serial', jsonPath: '{.disk.serial}' },
      { name: 'Size', jsonPath: '{.disk.size}' }, { name: 'Wipe', jsonPath: '{.wipe}' },
      { name: 'Reboot', jsonPath: '{.reboot}' },
    ],
  },
  {
    type: INSTALL_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.InstallStatusSpec,
    access: 'controllers',
    printColumns: [
      { name: 'Phase', jsonPath: '{.phase}' }, { name: 'Disk', jsonPath: '{.disk}' },
      { name: 'Version', jsonPath: '{.version}' }, { name: 'Done', jsonPath: '{.bytesDone}' },
      { name: 'Total', jsonPath: '{.bytesTotal}' }, { name: 'Error', jsonPath: '{.error}' },
    ],
  },
  ...SECURITY_TYPES,
];
