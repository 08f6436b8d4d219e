// system: kernel parameters (sysctls) through /proc/sys; kernel modules through
// finit_module with modules.dep.
import { native } from '../../native/index.ts';
import { existsSync } from 'node:fs';
import { inHostMode, type Plugin } from '../../machinery/model/plugin.ts';
import { kernelParamMergeController } from './kernel-param-merge.ts';
import { kernelParamSpecController } from './kernel-param-spec.ts';
import { sysctlPath } from '../../machinery/sys/sysctl.ts';
import { kernelParamConfigController } from './kernel-param-config.ts';
import { kernelModuleMergeController } from './modules/kernel-module-merge.ts';
import { kernelModuleSpecController } from './modules/kernel-module-spec.ts';
import { kernelModuleStatusController } from './modules/kernel-module-status.ts';
import { deviceStatusController } from './modules/device-status.ts';
import { defaultModuleSources, nativeLoader } from '../../machinery/kernel/module-index.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';
import { fileMergeController } from './files/file-merge.ts';
import { fileSpecController } from './files/file-spec.ts';
import { SYSTEM_NS } from '../../proto/gen/resource-types.ts';

export const systemPlugin: Plugin = {
  name: 'system',
  description: 'Kernel parameters (sysctls), written to /proc/sys and read back; '
    + 'kernel modules loaded with their dependencies; devices and their drivers, loaded by modalias; '
    + 'files on /run, /var and /tmp.',
  namespaces: () => ({ [SYSTEM_NS]: 'Kernel and machine settings.' }),
  types: () => definitionsServedBy('system'),
  // Most sysctls check CAP_SYS_ADMIN; net.* ones CAP_NET_ADMIN; finit_module CAP_SYS_MODULE; Yama's
  // ptrace_scope CAP_SYS_PTRACE (its filter refuses ptrace itself; CAP_SYS_MODULE outweighs it anyway).
  capabilities: ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN', 'CAP_SYS_MODULE', 'CAP_SYS_PTRACE'],
  syscalls: ['finit_module', 'delete_module'],
  controllers: () => [
    kernelParamConfigController({ ...(inHostMode() ? {} : { has: (key) => existsSync(sysctlPath(key)) }) }),
    kernelParamSpecController(),
    kernelModuleSpecController(nativeLoader(native), defaultModuleSources()),
    kernelModuleStatusController(defaultModuleSources(), native),
    deviceStatusController({
      sources: defaultModuleSources(), native, ...(inHostMode() ? {} : { loader: nativeLoader(native) }),
    }),
    fileSpecController(),
  ],
  // Layers in, one spec per id out: on the engine (Plugin.engineControllers).
  engineControllers: () => [kernelParamMergeController(), kernelModuleMergeController(), fileMergeController()],
};
