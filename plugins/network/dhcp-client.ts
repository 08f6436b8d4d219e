// dhcp-client: every physical link without explicit configuration (no AddressSpec
// from another layer) gets a DHCP client; its lease becomes AddressSpec, RouteSpec,
// ResolverSpec and HostnameSpec at the dhcp layer, and a DhcpLease status. Clients
// release their lease when the plugin stops.
import type { Controller } from '../../init/cosi/controller/contract.ts';
import type { Native } from '../../native/index.ts';
import { DhcpClient } from './dhcp/client.ts';
import type { Rtnl } from './rtnetlink/client.ts';
import type { Lease } from './dhcp/message.ts';
import {
  ADDRESS_SPEC_TYPE, DHCP_LEASE_TYPE, HOSTNAME_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, TIME_SERVER_SPEC_TYPE,
  type AddressSpecSpec, type DhcpLeaseSpec, type LinkStatusSpec,
} from './types.ts';

export interface DhcpControllerOptions {
  /** Which links are physical (default: Ethernet without a virtual kind). Tests widen it to a veth. */
  eligible?: (name: string, link: LinkStatusSpec) => boolean;
  retryMs?: number;
}

const physical = (_: string, l: LinkStatusSpec) => l.type === 'ether' && !l.kind;

export function dhcpClientController(n: () => Native, rtnl: () => Rtnl, o: DhcpControllerOptions = {}): Controller {
  const eligible = o.eligible ?? physical;
  return {
    name: 'dhcp-client',
    inputs: () => [{ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' }, { namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, kind: 'weak' }],
    outputs: () => [
      { type: ADDRESS_SPEC_TYPE, kind: 'shared' }, { type: ROUTE_SPEC_TYPE, kind: 'shared' }, { type: RESOLVER_SPEC_TYPE, kind: 'shared' },
      { type: HOSTNAME_SPEC_TYPE, kind: 'shared' }, { type: TIME_SERVER_SPEC_TYPE, kind: 'shared' }, { type: DHCP_LEASE_TYPE, kind: 'exclusive' },
    ],
    async run(ctx) {
      const clients = new Map<string, { client: DhcpClient; acquired?: string }>();
      const put = async <S>(type: string, id: string, spec: S, keep: Set<string>) => {
        keep.add(id);
        await ctx.state.put({ namespace: NETWORK_NS, type, id }, spec);
      };
      try {
        while (await ctx.next()) {
          const links = new Map((await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE })).map((r) => [r.metadata.id, r.spec as LinkStatusSpec]));
          const configured = new Set((await ctx.state.list({ namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE }))
            .filter((r) => (r.spec as AddressSpecSpec).layer !== 'dhcp' && r.metadata.owner !== 'dhcp-client').map((r) => (r.spec as AddressSpecSpec).link));
          const want = new Set([...links].filter(([name, l]) => eligible(name, l) && !configured.has(name) && l.mac).map(([name]) => name));
          for (const [name, c] of clients) if (!want.has(name) || links.get(name)?.index === undefined) { c.client.stop(true); clients.delete(name); }
          for (const name of want) {
            if (clients.has(name)) continue;
            const link = links.get(name)!;
            const entry: { client: DhcpClient; acquired?: string } = { client: undefined as unknown as DhcpClient };
            entry.client = new DhcpClient({
              native: n(), ifindex: link.index, mac: link.mac!,
              log: { info: (m) => ctx.log.info(`${name}: ${m}`), warn: (m) => ctx.log.warn(`${name}: ${m}`) },
              onLease: (lease: Lease | null) => { entry.acquired = lease ? new Date().toISOString() : undefined; ctx.requestReconcile(); },
              ...(o.retryMs ? { retryMs: o.retryMs } : {}),
            });
            clients.set(name, entry);
            // An address needs the link up; the address controller would do it only once there is one.
            if (!link.up) rtnl().setLink(link.index, { up: true });
            entry.client.start();
          }
          const keep = { addr: new Set<string>(), route: new Set<string>(), dns: new Set<string>(), host: new Set<string>(), ntp: new Set<string>(), lease: new Set<string>() };
          for (const [name, { client, acquired }] of clients) {
            const l = client.lease;
            const status: DhcpLeaseSpec = { state: client.state, ...(l ? { address: `${l.address}/${l.prefix}`, server: l.server, dns: l.dns, leaseSeconds: l.leaseSeconds, ...(l.router ? { gateway: l.router } : {}), ...(acquired ? { acquired } : {}) } : {}) };
            await put(DHCP_LEASE_TYPE, name, status, keep.lease);
            if (!l) continue;
            await put(ADDRESS_SPEC_TYPE, `dhcp-${name}`, { address: `${l.address}/${l.prefix}`, link: name, layer: 'dhcp' }, keep.addr);
            if (l.router) await put(ROUTE_SPEC_TYPE, `dhcp-default-${name}`, { gateway: l.router, link: name, layer: 'dhcp' }, keep.route);
            if (l.dns.length) await put(RESOLVER_SPEC_TYPE, `dhcp-${name}`, { servers: l.dns.slice(0, 3), ...(l.domain ? { searchDomains: [l.domain] } : {}), layer: 'dhcp' }, keep.dns);
            if (l.ntp.length) await put(TIME_SERVER_SPEC_TYPE, `dhcp-${name}`, { servers: l.ntp, layer: 'dhcp' }, keep.ntp);
            if (l.hostname) await put(HOSTNAME_SPEC_TYPE, `dhcp-${name}`, { hostname: l.hostname, ...(l.domain ? { domainname: l.domain } : {}), layer: 'dhcp' }, keep.host);
          }
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: DHCP_LEASE_TYPE }, keep.lease);
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE }, keep.addr);
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: ROUTE_SPEC_TYPE }, keep.route);
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE }, keep.dns);
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE }, keep.host);
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: TIME_SERVER_SPEC_TYPE }, keep.ntp);
        }
      } finally {
        for (const c of clients.values()) c.client.stop(true);
      }
    },
  };
}
