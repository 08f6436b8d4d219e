// types: the system plugin's resources, in the `system` namespace.
//   KernelParamSpec   a sysctl to set (id = the key, e.g. net.ipv4.ip_forward)
//   KernelParamStatus what the kernel reports back for it, or why it failed
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';

export const SYSTEM_NS = 'system';
export const KERNEL_PARAM_SPEC_TYPE = 'KernelParamSpecs.system.appliance.dev';
export const KERNEL_PARAM_STATUS_TYPE = 'KernelParamStatuses.system.appliance.dev';

export interface KernelParamSpecSpec { value: string }
export interface KernelParamStatusSpec { state: 'applied' | 'error'; value?: string; original?: string; error?: string }

export const SYSTEM_TYPES: DefinitionInput[] = [
  {
    type: KERNEL_PARAM_SPEC_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['sysctl', 'sysctls'],
    printColumns: [{ name: 'Value', jsonPath: '{.value}' }],
    schema: { type: 'object', required: ['value'], properties: { value: { type: 'string', pattern: '^[^\\n]{0,4096}$' } } },
  },
  {
    type: KERNEL_PARAM_STATUS_TYPE, defaultNamespace: SYSTEM_NS,
    printColumns: [{ name: 'State', jsonPath: '{.state}' }, { name: 'Value', jsonPath: '{.value}' }, { name: 'Error', jsonPath: '{.error}' }],
  },
];
