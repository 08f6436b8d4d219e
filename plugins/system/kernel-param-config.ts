// kernel-param-config: the default layer of KernelParamSpec: the hardening parameters
// (hardening.ts) this kernel has, as `default/<key>` (a user's spec of the same key, under
// any other id, wins). On a host (`serve`) there are none: the host's own settings are its own.
import type { Controller } from '../../cosi/controller/contract.ts';
import { HARDENING_PARAMS } from '../../machinery/kernel/hardening.ts';
import { type KernelParamSpecSpec } from './types.ts';
import { KERNEL_PARAM_SPEC_TYPE, SYSTEM_NS } from '../../proto/gen/resource-types.ts';

export interface KernelParamConfigOptions {
  /** Whether the kernel has a parameter (/proc/sys/<key> exists); undefined: publish none (a host). */
  has?: (key: string) => boolean;
}

export function kernelParamConfigController(o: KernelParamConfigOptions): Controller {
  return {
    name: 'kernel-param-config',
    inputs: () => [],
    outputs: () => [{ type: KERNEL_PARAM_SPEC_TYPE, kind: 'shared' }],
    async run(ctx) {
      while (await ctx.next()) {
        const keep = new Set<string>();
        for (const p of o.has ? HARDENING_PARAMS.filter((x) => o.has!(x.key)) : []) {
          const id = `default/${p.key}`;
          keep.add(id);
          await ctx.state.put<KernelParamSpecSpec>({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id },
            { key: p.key, value: p.value, layer: 'default' });
        }
        await ctx.state.cleanup({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE }, keep);
      }
    },
  };
}
