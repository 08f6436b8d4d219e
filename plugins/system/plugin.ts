// system: kernel parameters (sysctls) through /proc/sys; kernel modules through
// finit_module with modules.dep.
import { native } from '../../native/index.ts';
import type { Plugin } from '../sdk/plugin.ts';
import { kernelParamController } from './kernel-param.ts';
import { defaultModuleSources, kernelModuleController, nativeLoader } from './modules/kernel-module.ts';
import { SYSTEM_NS, SYSTEM_TYPES } from './types.ts';

export const systemPlugin: Plugin = {
  name: 'system',
  description: 'Kernel parameters (sysctls), written to /proc/sys and read back; kernel modules loaded with their dependencies.',
  namespaces: () => ({ [SYSTEM_NS]: 'Kernel and machine settings.' }),
  types: () => SYSTEM_TYPES,
  // Most sysctls check CAP_SYS_ADMIN; net.* ones CAP_NET_ADMIN; finit_module CAP_SYS_MODULE.
  capabilities: ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN', 'CAP_SYS_MODULE'],
  controllers: () => [kernelParamController(), kernelModuleController(nativeLoader(native), defaultModuleSources(), native)],
};
