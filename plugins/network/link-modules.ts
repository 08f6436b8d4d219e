// link-modules: every virtual link kind a merged LinkSpec declares -> a KernelModuleSpec
// (default layer) for the module that brings it (bonding, bridge, 8021q), which the system
// plugin loads with its dependencies. The kernel would ask for it itself (request_module),
// but this system has no modprobe for it to run; link-spec waits for the module's status.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { KIND_MODULES } from './rtnetlink/link-kinds.ts';
import { type LinkSpecSpec } from './types.ts';
import {
  KERNEL_MODULE_SPEC_TYPE, MERGED_LINK_SPEC_TYPE, NETWORK_NS, SYSTEM_NS,
} from '../../proto/gen/resource-types.ts';

/** bonding makes a bond0 of its own when loaded (max_bonds=1): the specs make the bonds here, as they declare them. */
const MODULE_PARAMETERS: Record<string, string> = { bonding: 'max_bonds=0' };

export function linkModulesController(): Controller {
  return {
    name: 'link-modules',
    inputs: () => [{ namespace: NETWORK_NS, type: MERGED_LINK_SPEC_TYPE, kind: 'weak' }],
    outputs: () => [{ type: KERNEL_MODULE_SPEC_TYPE, kind: 'shared' }],
    async run(ctx) {
      while (await ctx.next()) {
        const keep = new Set<string>();
        const specs = await ctx.state.list({ namespace: NETWORK_NS, type: MERGED_LINK_SPEC_TYPE });
        for (const r of specs as Resource<LinkSpecSpec>[]) {
          const module = r.spec.kind ? KIND_MODULES[r.spec.kind] : undefined;
          if (!module || r.metadata.phase !== 'running') continue;
          const id = `network/${module}`;
          keep.add(id);
          const parameters = MODULE_PARAMETERS[module];
          await ctx.state.put({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE, id },
            { module, layer: 'default', ...(parameters ? { parameters } : {}) });
        }
        await ctx.state.cleanup({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE }, keep);
      }
    },
  };
}
