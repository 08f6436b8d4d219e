// route-spec: MergedRouteSpec (id [table-N/]destination/metric) -> the route in its table
// -> RouteSpecStatus. Re-tried when links or addresses change (a gateway becomes
// reachable once an address in its subnet is up). A merged spec whose gateway, link or
// attributes changed (a higher layer took over) replaces the old route.
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { parseCidr } from './address-spec.ts';
import { linksByName } from './link-status.ts';
import { DEFAULT_METRIC, MAIN_TABLE, routeDestination } from './route-merge.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import type { RouteKind } from './rtnetlink/route.ts';
import { type RouteSpecSpec, type RouteSpecStatusSpec } from './types.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_ROUTE_SPEC_TYPE, NETWORK_NS, ROUTE_SPEC_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';

type Applied = NonNullable<RouteSpecStatusSpec['applied']>;

const same = (a: Applied, b: Applied) => JSON.stringify(a) === JSON.stringify(b);

/** A route that drops packets needs no link. */
const drops = (s: { type?: string }) => s.type !== undefined && s.type !== 'unicast';

export function routeSpecController(rtnl: () => RtnlApi) {
  const want = (s: RouteSpecSpec): Applied => ({
    destination: routeDestination(s), ...(s.gateway ? { gateway: s.gateway } : {}), link: s.link,
    metric: s.metric ?? DEFAULT_METRIC, table: s.table ?? MAIN_TABLE, ...(s.onLink ? { onLink: true } : {}),
    ...(s.source ? { source: s.source } : {}), ...(s.mtu !== undefined ? { mtu: s.mtu } : {}),
    ...(s.type ? { type: s.type } : {}),
  });
  const describe = (s: RouteSpecSpec): RouteSpecStatusSpec => {
    const { destination, gateway, link, metric, table } = want(s);
    return { destination, ...(gateway ? { gateway } : {}), link, metric, table, layer: layerOf(s) };
  };
  const kernel = (op: 'add' | 'del', r: Applied, index: number | undefined) => {
    const { ip, prefix } = parseCidr(r.destination);
    rtnl().route(op, {
      dst: ip, dstLen: prefix, metric: r.metric, table: r.table, ...(index !== undefined ? { oif: index } : {}),
      ...(r.gateway ? { gateway: r.gateway } : {}), ...(r.onLink ? { onLink: true } : {}),
      ...(r.source ? { source: r.source } : {}), ...(r.mtu !== undefined ? { mtu: r.mtu } : {}),
      ...(r.type ? { kind: r.type as RouteKind } : {}),
    });
  };
  const remove = (r: Applied, links: Map<string, { index: number }>) => {
    const link = r.link ? links.get(r.link) : undefined;
    if (r.link && !link) return; // gone with its link
    try {
      kernel('del', r, link?.index);
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
      if (!s.link && !drops(s)) {
        return { ...describe(s), state: 'error', error: 'a unicast route needs a link (only blackhole, unreachable '
          + 'and prohibit routes have none)' };
      }
      if (s.link && drops(s)) {
        return { ...describe(s), state: 'error', error: `a ${s.type} route drops packets: it has no link `
          + `(remove link ${s.link})` };
      }
      const link = s.link ? links.get(s.link) : undefined;
      if (s.link && !link) return { ...describe(s), state: 'pending', error: `link "${s.link}" does not exist (yet)` };
      try {
        kernel('add', w, link?.index);
      } catch (e) {
        if (isErrno(e, 'ENETUNREACH')) {
          return {
            ...describe(s), state: 'pending',
            error: `gateway ${s.gateway} is not reachable from ${s.link} (no address in its subnet yet; `
              + 'onLink: true says it is on the link all the same)',
          };
        }
        if (isErrno(e, 'EINVAL') && s.source) {
          return { ...describe(s), state: 'pending', error: `source ${s.source} is not an address of this machine `
            + '(yet): the kernel refuses a preferred source it does not have (EINVAL)' };
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
