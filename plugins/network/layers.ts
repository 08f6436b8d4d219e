// layers: where a spec came from, lowest to highest. Where several specs describe
// the same thing (the hostname, the resolvers), the highest layer wins.
import type { ControllerState } from '../../init/cosi/controller/contract.ts';
import { NETWORK_NS, type Layer } from './types.ts';

export const LAYER_ORDER: readonly Layer[] = ['default', 'cmdline', 'dhcp', 'platform', 'user'];

/** The winning spec: highest layer; within a layer, the lowest id (stable). */
export function pickByLayer<T extends { layer?: Layer }>(specs: readonly { id: string; spec: T }[]): { id: string; spec: T } | undefined {
  const rank = (s: T) => LAYER_ORDER.indexOf(s.layer ?? 'user');
  return [...specs].sort((a, b) => rank(b.spec) - rank(a.spec) || (a.id < b.id ? -1 : 1))[0];
}

/** The winning running spec of a type in the network namespace (hostname, resolvers). */
export async function winningSpec<T extends { layer?: Layer }>(state: ControllerState, type: string): Promise<{ id: string; spec: T } | undefined> {
  const specs = (await state.list({ namespace: NETWORK_NS, type })).filter((r) => r.metadata.phase === 'running');
  return pickByLayer(specs.map((r) => ({ id: r.metadata.id, spec: r.spec as T })));
}
