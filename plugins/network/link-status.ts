// link-status: the kernel's links, with their addresses (IPv6 link-local included)
// -> LinkStatus resources. Woken by link and address notifications (no polling);
// every reconcile lists all links, so a missed notification costs nothing but latency.
import type { Controller } from '../../init/cosi/controller/contract.ts';
import type { Rtnl } from './rtnetlink/client.ts';
import { LINK_STATUS_TYPE, NETWORK_NS, type LinkStatusSpec } from './types.ts';

export function linkStatusController(rtnl: () => Rtnl): Controller {
  return {
    name: 'link-status',
    inputs: () => [],
    outputs: () => [{ type: LINK_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = rtnl().watchLinks(() => ctx.requestReconcile(), () => ctx.requestReconcile());
      try {
        while (await ctx.next()) {
          const keep = new Set<string>();
          const addresses = new Map<number, string[]>();
          for (const a of rtnl().addresses()) addresses.set(a.index, [...(addresses.get(a.index) ?? []), `${a.address}/${a.prefix}`]);
          for (const l of rtnl().links()) {
            keep.add(l.name);
            const spec: LinkStatusSpec = {
              index: l.index, type: l.type, up: l.up, operState: l.operState,
              ...(l.kind ? { kind: l.kind } : {}), ...(l.mtu !== undefined ? { mtu: l.mtu } : {}),
              ...(l.mac ? { mac: l.mac } : {}), ...(l.carrier !== undefined ? { carrier: l.carrier } : {}),
              addresses: (addresses.get(l.index) ?? []).sort(),
            };
            await ctx.state.put({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: l.name }, spec);
          }
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE }, keep);
        }
      } finally { stop(); }
    },
  };
}
