// kernel-module-status: /proc/modules -> KernelModuleStatus per loaded module (lsmod),
// with whether a KernelModuleSpec asks for it. Woken by module uevents, so modules
// loaded any other way (the kernel's request_module, a dependency) show too.
import type { Controller } from '../../../cosi/controller/contract.ts';
import type { Native } from '../../../native/index.ts';
import { subscribeUevents } from '../../sdk/uevent.ts';
import { type KernelModuleStatusSpec } from '../types.ts';
import { readLoaded, type ModuleSources } from '../../../machinery/kernel/module-index.ts';
import {
  KERNEL_MODULE_STATUS_TYPE, MERGED_KERNEL_MODULE_SPEC_TYPE, SYSTEM_NS,
} from '../../../proto/gen/resource-types.ts';

export function kernelModuleStatusController(sources: ModuleSources, n?: () => Native): Controller {
  return {
    name: 'kernel-module-status',
    inputs: () => [{ namespace: SYSTEM_NS, type: MERGED_KERNEL_MODULE_SPEC_TYPE, kind: 'weak' }],
    outputs: () => [{ type: KERNEL_MODULE_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = n ? subscribeUevents(n(), 'module', () => ctx.requestReconcile()) : () => {};
      try {
        while (await ctx.next()) {
          const specs = await ctx.state.list({ namespace: SYSTEM_NS, type: MERGED_KERNEL_MODULE_SPEC_TYPE });
          const requested = new Set(specs.filter((r) => r.metadata.phase === 'running').map((r) => r.metadata.id));
          const loaded = readLoaded(sources);
          for (const m of loaded.values()) {
            const status: KernelModuleStatusSpec = {
              size: m.size, refCount: m.refCount, usedBy: m.usedBy, requested: requested.has(m.name),
            };
            await ctx.state.put({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE, id: m.name }, status);
          }
          await ctx.state.cleanup({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE }, new Set(loaded.keys()));
        }
      } finally { stop(); }
    },
  };
}
