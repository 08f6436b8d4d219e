// extension-override-keep: writes down the ExtensionOverrides pushed with `persist` (extension-push.ts) whenever they
// change, so that the next boot declares them again; one deleted (`cosictl delete extensionoverride NAME`) is gone
// from the file too.
import type { Controller } from '../../../cosi/controller/contract.ts';
import type { ExtensionOverrideSpec } from '../../../machinery/model/runtime-types.ts';
import { CONFIG_NS, EXTENSION_OVERRIDE_TYPE } from '../../../proto/gen/resource-types.ts';
import { writePersistedOverrides } from './extension-push.ts';

export function extensionOverrideKeep(file: string): Controller {
  return {
    name: 'extension-override-keep',
    inputs: () => [{ namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE, kind: 'weak' }],
    outputs: () => [],
    async run(ctx) {
      while (await ctx.next()) {
        const list = await ctx.state.list({ namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE });
        try {
          writePersistedOverrides(file, new Map(list.filter((r) => r.metadata.phase !== 'tearingDown')
            .map((r) => [r.metadata.id, r.spec as ExtensionOverrideSpec])));
        } catch (e) {
          ctx.log.error(`${file}: pushed extensions kept across boots cannot be written down: ${(e as Error).message}`);
        }
      }
    },
  };
}
