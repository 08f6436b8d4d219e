// route-merge: RouteSpecs of every layer -> one MergedRouteSpec per table, destination (and so
// family) and metric, the kernel's own key of a route: a default route declared by config
// replaces DHCP's at the same metric, and an IPv4 and an IPv6 default route stay two.
import { ipFamily } from '../../machinery/sys/ip-literal.ts';
import { mergeController } from '../sdk/merge-controller.ts';
import { type RouteSpecSpec } from './types.ts';
import { MERGED_ROUTE_SPEC_TYPE, NETWORK_NS, ROUTE_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

export const DEFAULT_METRIC = 1024;
export const MAIN_TABLE = 254;

/** A route's destination; unset is the default route of its gateway's (or source's) family. */
export function routeDestination(s: RouteSpecSpec): string {
  const v6 = (s.gateway && ipFamily(s.gateway) === 6) || (s.source && ipFamily(s.source) === 6);
  return s.destination ?? (v6 ? '::/0' : '0.0.0.0/0');
}

/** How a route's id names its table: `table-N/`, or nothing for main. */
export const tablePrefix = (table: number) => (table === MAIN_TABLE ? '' : `table-${table}/`);

/** The merged id: table (left out for main), destination, metric. */
export function routeKey(s: RouteSpecSpec): string {
  return `${tablePrefix(s.table ?? MAIN_TABLE)}${routeDestination(s)}/${s.metric ?? DEFAULT_METRIC}`;
}

export const routeMergeController = () => mergeController<RouteSpecSpec>({
  name: 'route-merge', namespace: NETWORK_NS, inputType: ROUTE_SPEC_TYPE, outputType: MERGED_ROUTE_SPEC_TYPE,
  key: routeKey,
  combine: 'winner',
});
