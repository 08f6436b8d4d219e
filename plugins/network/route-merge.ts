// route-merge: RouteSpecs of every layer -> one MergedRouteSpec per destination and
// metric (id destination/metric), the kernel's own key of the main table: a default
// route declared by config replaces DHCP's at the same metric.
import { isIP } from 'node:net';
import { mergeController } from '../sdk/merge-controller.ts';
import { type RouteSpecSpec } from './types.ts';
import { MERGED_ROUTE_SPEC_TYPE, NETWORK_NS, ROUTE_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

export const DEFAULT_METRIC = 1024;

/** A route's destination; unset is the default route of its gateway's family. */
export function routeDestination(s: RouteSpecSpec): string {
  return s.destination ?? (s.gateway && isIP(s.gateway) === 6 ? '::/0' : '0.0.0.0/0');
}

export const routeMergeController = () => mergeController<RouteSpecSpec>({
  name: 'route-merge', namespace: NETWORK_NS, inputType: ROUTE_SPEC_TYPE, outputType: MERGED_ROUTE_SPEC_TYPE,
  key: (s) => `${routeDestination(s)}/${s.metric ?? DEFAULT_METRIC}`,
  combine: 'winner',
});
