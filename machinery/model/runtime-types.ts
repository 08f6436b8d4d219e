// runtime-types: the namespaces the engine itself serves and the types of their specs (proto/appliance/runtime,
// and the API's security types of security-types.ts). Plugins read some of them (the kernel command line, the
// version), so they live here, below both. Every type is defined by its message's option in the .proto.
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { definitionsServedBy } from './definitions.ts';
import { SECURITY_NAMESPACES } from './security-types.ts';

export type {
  BootStatusSpec, ConfigChange, ConfigState, ConfigStatusSpec, IssueSpec, KernelCmdlineSpec, PluginStatusSpec,
  InstallRequestSpec, InstallStatusSpec, PowerAction, PowerRequestSpec, VersionSpec, HealthStatusSpec, HealthCheck,
  UpgradeRequestSpec, UpgradeStatusSpec, RollbackRequestSpec, UpgradePolicySpec, ShutdownRequestSpec,
  MachineStatusSpec, MachineStage, LogSinkSpec, LogSinkStatusSpec, MetricsEndpointSpec, ExtensionSpec,
  ExtensionStatusSpec, ExtensionPhase, ExtensionVolume, ExtensionSecretSpec, RegistryCredentialSpec,
  ExtensionOverrideSpec, ExtensionPolicySpec,
} from '../../proto/gen/spec-types.ts';
import { CONFIG_NS, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

export const NAMESPACES: Record<string, string> = {
  [RUNTIME_NS]: 'Observed state: what the engine and the plugins report.',
  [CONFIG_NS]: 'Desired state: what users and the machine config declare.',
  ...SECURITY_NAMESPACES,
};

/** The types the engine serves (runtime, config and security; defined in proto/appliance). */
export const ENGINE_TYPES: DefinitionInput[] = definitionsServedBy('engine');
