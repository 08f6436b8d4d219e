// types: the system plugin's resources, in the `system` namespace.
//   KernelParamSpec   a sysctl to set (id = the key, e.g. net.ipv4.ip_forward)
//   KernelParamStatus what the kernel reports back for it, or why it failed
//   KernelModuleSpec   a module to load (id = module name), with its dependencies
//   KernelModuleStatus every module in /proc/modules, and each spec that failed, with why
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';

export const SYSTEM_NS = 'system';
export const KERNEL_PARAM_SPEC_TYPE = 'KernelParamSpecs.system.appliance.dev';
export const KERNEL_PARAM_STATUS_TYPE = 'KernelParamStatuses.system.appliance.dev';

export const KERNEL_MODULE_SPEC_TYPE = 'KernelModuleSpecs.system.appliance.dev';
export const KERNEL_MODULE_STATUS_TYPE = 'KernelModuleStatuses.system.appliance.dev';

export interface KernelParamSpecSpec { value: string }
export interface KernelParamStatusSpec { state: 'applied' | 'error'; value?: string; original?: string; error?: string }

export interface KernelModuleSpecSpec { parameters?: string }
export interface KernelModuleStatusSpec {
  state: 'loaded' | 'builtin' | 'error';
  size?: number; refCount?: number; usedBy?: string[];
  /** A KernelModuleSpec asks for it (else the kernel or another module loaded it). */
  requested: boolean;
  error?: string;
}

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
  {
    type: KERNEL_MODULE_SPEC_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['modules', 'kmod'],
    printColumns: [{ name: 'Parameters', jsonPath: '{.parameters}' }],
    schema: { type: 'object', properties: { parameters: { type: 'string', pattern: '^[^\\n]{0,1024}$' } } },
  },
  {
    type: KERNEL_MODULE_STATUS_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['lsmod'],
    printColumns: [{ name: 'State', jsonPath: '{.state}' }, { name: 'Size', jsonPath: '{.size}' }, { name: 'Used', jsonPath: '{.refCount}' }, { name: 'By', jsonPath: '{.usedBy}' }, { name: 'Error', jsonPath: '{.error}' }],
  },
];
