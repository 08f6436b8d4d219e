// runtime-types: the namespaces and types the engine itself serves (proto/appliance/
// runtime, and the API's security types of security-types.ts). Plugins read some of
// them (the kernel command line, the version), so they live here, below both. Plugins'
// own types are defined next to their controllers.
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { SECURITY_NAMESPACES, SECURITY_TYPES } from './security-types.ts';

export type {
  BootStatusSpec, ConfigChange, ConfigState, ConfigStatusSpec, IssueSpec, KernelCmdlineSpec, PluginStatusSpec,
  InstallRequestSpec, InstallStatusSpec, PowerAction, PowerRequestSpec, VersionSpec, HealthStatusSpec, HealthCheck,
  UpgradeRequestSpec, UpgradeStatusSpec, RollbackRequestSpec, UpgradePolicySpec, ShutdownRequestSpec,
  MachineStatusSpec, MachineStage, LogSinkSpec, LogSinkStatusSpec, MetricsEndpointSpec, ExtensionSpec,
  ExtensionStatusSpec, ExtensionPhase,
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
export const UPGRADE_REQUEST_TYPE = 'UpgradeRequests.runtime.appliance.dev';
export const UPGRADE_STATUS_TYPE = 'UpgradeStatuses.runtime.appliance.dev';
export const ROLLBACK_REQUEST_TYPE = 'RollbackRequests.runtime.appliance.dev';
export const UPGRADE_POLICY_TYPE = 'UpgradePolicies.runtime.appliance.dev';
export const HEALTH_TYPE = 'HealthStatuses.runtime.appliance.dev';
export const SHUTDOWN_REQUEST_TYPE = 'ShutdownRequests.runtime.appliance.dev';
export const SHUTDOWN_REQUEST_ID = 'shutdown';
export const MACHINE_STATUS_TYPE = 'MachineStatuses.runtime.appliance.dev';
export const MACHINE_STATUS_ID = 'machine';
export const LOG_SINK_TYPE = 'LogSinks.runtime.appliance.dev';
export const LOG_SINK_STATUS_TYPE = 'LogSinkStatuses.runtime.appliance.dev';
export const METRICS_ENDPOINT_TYPE = 'MetricsEndpoints.runtime.appliance.dev';
export const EXTENSION_TYPE = 'Extensions.runtime.appliance.dev';
export const EXTENSION_STATUS_TYPE = 'ExtensionStatuses.runtime.appliance.dev';
/** The id of the one HealthStatus. */
export const HEALTH_ID = 'machine';
/** The Version of a system not booted from a slot (a kernel, the ISO, PXE). */
export const RUNNING_VERSION_ID = 'appliance';
/** The id of the one ConfigStatus. */
export const CONFIG_STATUS_ID = 'machine';

export const ENGINE_TYPES: DefinitionInput[] = [
  {
    // One per boot slot on an installed disk: `get versions` and `get bootslots` show the same table.
    type: VERSION_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.VersionSpec, access: 'controllers',
    aliases: ['bootslots', 'slots'],
    printColumns: [
      { name: 'Appliance', jsonPath: '{.version}' }, { name: 'Commit', jsonPath: '{.commit}' },
      { name: 'Kernel', jsonPath: '{.kernel}' }, { name: 'Running', jsonPath: '{.running}' },
      { name: 'Default', jsonPath: '{.defaultBoot}' }, { name: 'Good', jsonPath: '{.good}' },
      { name: 'Tries Left', jsonPath: '{.triesLeft}' }, { name: 'Problem', jsonPath: '{.problem}' },
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
    printColumns: [
      { name: 'Action', jsonPath: '{.action}' }, { name: 'Grace', jsonPath: '{.graceSeconds}' },
      { name: 'Force', jsonPath: '{.force}' },
    ],
  },
  {
    // Sends every log off the machine: admins only.
    type: LOG_SINK_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.LogSinkSpec, aliases: ['logsink'],
    access: 'admin',
    printColumns: [{ name: 'Endpoint', jsonPath: '{.endpoint}' }, { name: 'Sources', jsonPath: '{.sources}' }],
  },
  {
    // Opens a port: admins only.
    type: METRICS_ENDPOINT_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.MetricsEndpointSpec,
    aliases: ['metrics'], access: 'admin', printColumns: [{ name: 'Listen', jsonPath: '{.listen}' }],
  },
  {
    // Runs a program of someone else's on the machine (confined, but with the capabilities it asks for): admins only.
    type: EXTENSION_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.ExtensionSpec, aliases: ['ext'],
    access: 'admin',
    printColumns: [{ name: 'Source', jsonPath: '{.source}' }, { name: 'SHA256', jsonPath: '{.sha256}' }],
  },
  {
    type: EXTENSION_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.ExtensionStatusSpec,
    aliases: ['extstatus'], access: 'controllers',
    printColumns: [
      { name: 'Phase', jsonPath: '{.phase}' }, { name: 'Version', jsonPath: '{.version}' },
      { name: 'Outputs', jsonPath: '{.outputs}' }, { name: 'Error', jsonPath: '{.error}' },
    ],
  },
  {
    type: LOG_SINK_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.LogSinkStatusSpec,
    aliases: ['logsinkstatus'], access: 'controllers',
    printColumns: [
      { name: 'State', jsonPath: '{.state}' }, { name: 'Sent', jsonPath: '{.sent}' },
      { name: 'Buffered', jsonPath: '{.buffered}' }, { name: 'Dropped', jsonPath: '{.dropped}' },
      { name: 'Error', jsonPath: '{.error}' },
    ],
  },
  {
    // The engine's; users and plugins hold it with finalizers (a finalizer is any writer's to add).
    type: SHUTDOWN_REQUEST_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.ShutdownRequestSpec,
    aliases: ['shutdownrequest'], access: 'controllers',
    printColumns: [
      { name: 'Action', jsonPath: '{.action}' }, { name: 'Reason', jsonPath: '{.reason}' },
      { name: 'Deadline', jsonPath: '{.deadline}' },
    ],
  },
  {
    type: MACHINE_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.MachineStatusSpec,
    aliases: ['machinestatus'], access: 'controllers',
    printColumns: [
      { name: 'Stage', jsonPath: '{.stage}' }, { name: 'Action', jsonPath: '{.action}' },
      { name: 'Reason', jsonPath: '{.reason}' }, { name: 'Held by', jsonPath: '{.heldBy}' },
    ],
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
  {
    // Replaces the running system: admins only. A request, not config: never persisted.
    type: UPGRADE_REQUEST_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.UpgradeRequestSpec,
    ephemeral: true, access: 'admin',
    printColumns: [{ name: 'Source', jsonPath: '{.source}' }, { name: 'Reboot', jsonPath: '{.reboot}' }],
  },
  {
    type: UPGRADE_STATUS_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.UpgradeStatusSpec,
    access: 'controllers',
    printColumns: [
      { name: 'Phase', jsonPath: '{.phase}' }, { name: 'From', jsonPath: '{.fromVersion}' },
      { name: 'To', jsonPath: '{.version}' }, { name: 'Slot', jsonPath: '{.slot}' },
      { name: 'Received', jsonPath: '{.bytesReceived}' }, { name: 'Error', jsonPath: '{.error}' },
    ],
  },
  {
    type: ROLLBACK_REQUEST_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.RollbackRequestSpec,
    ephemeral: true, access: 'admin',
    printColumns: [{ name: 'Reboot', jsonPath: '{.reboot}' }],
  },
  {
    // Which signatures the machine accepts: config, admins only.
    type: UPGRADE_POLICY_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.UpgradePolicySpec,
    access: 'admin',
    printColumns: [{ name: 'Min Version', jsonPath: '{.minVersion}' }],
  },
  {
    type: HEALTH_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.HealthStatusSpec, access: 'controllers',
    aliases: ['health'],
    printColumns: [{ name: 'Healthy', jsonPath: '{.healthy}' }, { name: 'Since', jsonPath: '{.since}' }],
  },
  ...SECURITY_TYPES,
];
