// route-spec: MergedRouteSpec (id destination/metric) -> the route in the main table
// -> RouteSpecStatus. Re-tried when links or addresses change (a gateway becomes
// reachable once an address in its subnet is up). A merged spec whose gateway or link
// changed (a higher layer took over) replaces the old route.
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { parseCidr } from './address-spec.ts';
import { linksByName } from './link-status.ts';
import { DEFAULT_METRIC, routeDestination } from './route-merge.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import { type RouteSpecSpec, type RouteSpecStatusSpec } from './types.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_ROUTE_SPEC_TYPE, NETWORK_NS, ROUTE_SPEC_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';

type Applied = NonNullable<RouteSpecStatusSpec['applied']>;

const same = (a: Applied, b: Applied) =>
  a.destination === b.destination && a.gateway === b.gateway && a.link === b.link && a.metric === b.metric;

export function routeSpecController(rtnl: () => RtnlApi) {
  const want = (s: RouteSpecSpec): Applied => ({
    destination: routeDestination(s), ...(s.gateway ? { gateway: s.gateway } : {}), link: s.link,
    metric: s.metric ?? DEFAULT_METRIC,
  });
  const describe = (s: RouteSpecSpec): RouteSpecStatusSpec => ({ ...want(s), layer: layerOf(s) });
  const kernel = (op: 'add' | 'del', r: Applied, index: number) => {
    const { ip, prefix } = parseCidr(r.destination);
    rtnl().route(op, {
      dst: ip, dstLen: prefix, oif: index, metric: r.metric, ...(r.gateway ? { gateway: r.gateway } : {}),
    });
  };
  const remove = (r: Applied, links: Map<string, { index: number }>) => {
    const link = links.get(r.link);
    if (!link) return; // gone with its link
    try {
      kernel('del', r, link.index);
    } catch (e) {
      if (!isErrno(e, 'ESRCH')) throw e;
    }
  };
  return specController<RouteSpecSpec, RouteSpecStatusSpec, Awaited<ReturnType<typeof linksByName>>>({
    name: 'route-spec', namespace: NETWORK_NS, specType: MERGED_ROUTE_SPEC_TYPE, statusType: ROUTE_SPEC_STATUS_TYPE,
    inputs: [
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: ADDRESS_SPEC_STATUS_TYPE, kind: 'weak' },
    ],
    observe: (ctx) => linksByName(ctx.state),
    apply(_id, s, prev, links) {
      const w = want(s);
      if (prev?.applied && !same(prev.applied, w)) remove(prev.applied, links);
      const link = links.get(s.link);
      if (!link) return { ...describe(s), state: 'pending', error: `link "${s.link}" does not exist (yet)` };
      try {
        kernel('add', w, link.index);
      } catch (e) {
        if (isErrno(e, 'ENETUNREACH')) {
          return {
            ...describe(s), state: 'pending',
            error: `gateway ${s.gateway} is not reachable from ${s.link} (no address in its subnet yet)`,
          };
        }
        if (!isErrno(e, 'EEXIST')) throw e;
      }
      return { ...describe(s), state: 'applied', applied: w };
    },
    failed: (_id, s, prev, error) => ({
      ...describe(s), state: 'error', error, ...(prev?.applied ? { applied: prev.applied } : {}),
    }),
    undo(_id, prev, links) { if (prev.applied) remove(prev.applied, links); },
  });
}
