// route-spec: RouteSpec -> a route in the main table -> RouteStatus. Re-tried when
// addresses change (a gateway becomes reachable once its subnet's address is up).
import type { Controller } from '../../init/cosi/controller/contract.ts';
import type { Rtnl } from './rtnetlink/client.ts';
import { parseCidr } from './address-spec.ts';
import { specApplier } from './spec-applier.ts';
import { ADDRESS_STATUS_TYPE, NETWORK_NS, ROUTE_SPEC_TYPE, ROUTE_STATUS_TYPE, type RouteSpecSpec } from './types.ts';
import { isIP } from 'node:net';

function destination(s: RouteSpecSpec): string {
  return s.destination ?? (s.gateway && isIP(s.gateway) === 6 ? '::/0' : '0.0.0.0/0');
}

export function routeSpecController(rtnl: () => Rtnl): Controller {
  return specApplier<RouteSpecSpec>({
    name: 'route-spec',
    specType: ROUTE_SPEC_TYPE,
    statusType: ROUTE_STATUS_TYPE,
    extraInputs: [{ namespace: NETWORK_NS, type: ADDRESS_STATUS_TYPE, kind: 'weak' }],
    key: (s) => `${destination(s)} via ${s.gateway ?? '-'} dev ${s.link} metric ${s.metric ?? 1024}`,
    link: (s) => s.link,
    apply(s, link) {
      const { ip, prefix } = parseCidr(destination(s));
      try {
        rtnl().route('add', { dst: ip, dstLen: prefix, oif: link.index, metric: s.metric ?? 1024, ...(s.gateway ? { gateway: s.gateway } : {}) });
      } catch (e) {
        if ((e as { code?: string }).code === 'ENETUNREACH') throw new Error(`gateway ${s.gateway} is not reachable from ${s.link} (no address in its subnet yet?)`);
        throw e;
      }
    },
    remove(key, links) {
      const [dst = '', , gw = '-', , name = '', , metric = '1024'] = key.split(' ');
      const link = links.get(name);
      if (!link) return;
      const { ip, prefix } = parseCidr(dst);
      try { rtnl().route('del', { dst: ip, dstLen: prefix, oif: link.index, metric: Number(metric), ...(gw !== '-' ? { gateway: gw } : {}) }); } catch (e) {
        if ((e as { code?: string }).code !== 'ESRCH') throw e;
      }
    },
  });
}
