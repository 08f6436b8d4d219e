// system: kernel parameters (sysctls) through /proc/sys.
import type { Plugin } from '../sdk/plugin.ts';
import { kernelParamController } from './kernel-param.ts';
import { SYSTEM_NS, SYSTEM_TYPES } from './types.ts';

export const systemPlugin: Plugin = {
  name: 'system',
  description: 'Kernel parameters (sysctls), written to /proc/sys and read back.',
  namespaces: () => ({ [SYSTEM_NS]: 'Kernel and machine settings.' }),
  types: () => SYSTEM_TYPES,
  // Most sysctls check CAP_SYS_ADMIN; net.* ones CAP_NET_ADMIN.
  capabilities: ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN'],
  controllers: () => [kernelParamController()],
};
