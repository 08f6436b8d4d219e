// route-status: every route in the kernel (but its local table) -> KernelRoute resources, whoever
// put it there: this system's RouteSpecs, the kernel's own prefix routes, a router advertisement's
// default route. Woken by route notifications; every reconcile lists them all.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import type { RouteMessage } from './rtnetlink/route.ts';
import { tablePrefix } from './route-merge.ts';
import type { KernelRouteSpec } from './types.ts';
import { KERNEL_ROUTE_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

/** rtnetlink's RTPROT_* numbers by the names `ip route` prints. */
const PROTOCOLS: Record<number, string> = {
  1: 'redirect', 2: 'kernel', 3: 'boot', 4: 'static', 9: 'ra', 16: 'dhcp', 42: 'babel', 186: 'bgp', 187: 'isis',
  188: 'ospf', 189: 'rip',
};
const TYPES: Record<number, string> = {
  1: 'unicast', 2: 'local', 3: 'broadcast', 4: 'anycast', 5: 'multicast', 6: 'blackhole', 7: 'unreachable',
  8: 'prohibit', 9: 'throw', 10: 'nat',
};

export function kernelRouteOf(r: RouteMessage, linkName: (index: number) => string | undefined): KernelRouteSpec {
  const link = r.oif !== undefined ? linkName(r.oif) : undefined;
  return {
    destination: `${r.dst}/${r.dstLen}`, ...(r.gateway ? { gateway: r.gateway } : {}), ...(link ? { link } : {}),
    metric: r.metric ?? 0, table: r.table, protocol: PROTOCOLS[r.protocol] ?? String(r.protocol),
    type: TYPES[r.type] ?? String(r.type), ...(r.source ? { source: r.source } : {}),
    ...(r.mtu !== undefined ? { mtu: r.mtu } : {}),
  };
}

/** [table-N/]destination/metric/link: the kernel's key of a route, with the link that tells apart two of a key. */
export const kernelRouteId = (s: KernelRouteSpec) =>
  `${tablePrefix(s.table)}${s.destination}/${s.metric}/${s.link ?? '-'}`;

export function routeStatusController(rtnl: () => RtnlApi): Controller {
  return {
    name: 'route-status',
    inputs: () => [],
    outputs: () => [{ type: KERNEL_ROUTE_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = rtnl().watchRoutes(() => ctx.requestReconcile());
      try {
        while (await ctx.next()) {
          const names = new Map(rtnl().links().map((l) => [l.index, l.name]));
          const keep = new Set<string>();
          for (const r of [...rtnl().routes(4), ...rtnl().routes(6)]) {
            const spec = kernelRouteOf(r, (i) => names.get(i));
            const id = kernelRouteId(spec);
            if (keep.has(id)) continue; // a multipath route's second hop: the first stands for it
            keep.add(id);
            await ctx.state.put({ namespace: NETWORK_NS, type: KERNEL_ROUTE_TYPE, id }, spec);
          }
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: KERNEL_ROUTE_TYPE }, keep);
        }
      } finally { stop(); }
    },
  };
}
