// output-set: one reconcile pass of a controller that writes several output types
// (a layer's specs: cmdline-config, dhcp-spec, platform-network). What the pass puts
// is kept; at the end, the controller's other resources of those types are torn down.
import type { ControllerContext } from '../../cosi/controller/contract.ts';

export type OutputKinds = readonly (readonly [namespace: string, type: string])[];

export interface OutputSet {
  put(namespace: string, type: string, id: string, spec: object): Promise<void>;
  /** Tears down this controller's resources of the kinds that this pass did not put. */
  cleanup(): Promise<void>;
}

export function outputSet(ctx: ControllerContext, kinds: OutputKinds): OutputSet {
  const keep = new Map<string, Set<string>>(kinds.map(([, type]) => [type, new Set<string>()]));
  return {
    async put(namespace, type, id, spec) {
      keep.get(type)!.add(id);
      await ctx.state.put({ namespace, type, id }, spec);
    },
    async cleanup() {
      for (const [namespace, type] of kinds) await ctx.state.cleanup({ namespace, type }, keep.get(type)!);
    },
  };
}
