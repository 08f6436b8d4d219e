// dhcp-spec: MergedDhcpSpec -> a DHCPv4 client on every link where DHCP is enabled
// (and that is up); its lease becomes AddressSpec, RouteSpec, ResolverSpec,
// HostnameSpec and TimeServerSpec at the dhcp layer, and a DhcpLease status. A client
// releases its lease when DHCP is turned off for its link or the plugin stops.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import type { Native } from '../../native/index.ts';
import { outputSet } from '../sdk/output-set.ts';
import { DhcpClient } from './dhcp/client.ts';
import type { Lease } from './dhcp/message.ts';
import { linksByName } from './link-status.ts';
import { type DhcpLeaseSpec, type DhcpSpecSpec } from './types.ts';
import {
  ADDRESS_SPEC_TYPE, DHCP_LEASE_TYPE, HOSTNAME_SPEC_TYPE, LINK_STATUS_TYPE, MERGED_DHCP_SPEC_TYPE, NETWORK_NS,
  RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, TIME_NS, TIME_SERVER_SPEC_TYPE,
} from '../../proto/gen/resource-types.ts';

export interface DhcpSpecOptions {
  retryMs?: number;
}

const OUTPUTS = [
  [NETWORK_NS, ADDRESS_SPEC_TYPE], [NETWORK_NS, ROUTE_SPEC_TYPE], [NETWORK_NS, RESOLVER_SPEC_TYPE],
  [NETWORK_NS, HOSTNAME_SPEC_TYPE], [TIME_NS, TIME_SERVER_SPEC_TYPE], [NETWORK_NS, DHCP_LEASE_TYPE],
] as const;

export function leaseStatus(client: DhcpClient, acquired?: string): DhcpLeaseSpec {
  const l = client.lease;
  if (!l) return { state: client.state };
  return {
    state: client.state, address: `${l.address}/${l.prefix}`, ...(l.router ? { gateway: l.router } : {}),
    dns: l.dns, server: l.server,
    leaseSeconds: l.leaseSeconds, ...(acquired ? { acquired } : {}), ntp: l.ntp,
    ...(l.hostname ? { hostname: l.hostname } : {}), ...(l.domain ? { domain: l.domain } : {}),
  };
}

export function dhcpSpecController(n: () => Native, o: DhcpSpecOptions = {}): Controller {
  return {
    name: 'dhcp-spec',
    inputs: () => [
      { namespace: NETWORK_NS, type: MERGED_DHCP_SPEC_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => OUTPUTS.map(([, type]) => ({
      type, kind: type === DHCP_LEASE_TYPE ? 'exclusive' as const : 'shared' as const,
    })),
    async run(ctx) {
      const clients = new Map<string, { client: DhcpClient; index: number; acquired?: string }>();
      try {
        while (await ctx.next()) {
          const links = await linksByName(ctx.state);
          const specs = await ctx.state.list(
            { namespace: NETWORK_NS, type: MERGED_DHCP_SPEC_TYPE },
          ) as Resource<DhcpSpecSpec>[];
          const enabled = specs
            .filter((r) => r.metadata.phase === 'running' && r.spec.enabled === true).map((r) => r.metadata.id);
          const want = new Set(enabled.filter((name) => links.get(name)?.up && links.get(name)?.mac));
          for (const [name, c] of clients) {
            if (!want.has(name) || links.get(name)?.index !== c.index) {
              c.client.stop(true);
              clients.delete(name);
            }
          }
          for (const name of want) {
            if (clients.has(name)) continue;
            const link = links.get(name)!;
            const entry: { client: DhcpClient; index: number; acquired?: string } = {
              client: undefined as unknown as DhcpClient, index: link.index,
            };
            entry.client = new DhcpClient({
              native: n(), ifindex: link.index, mac: link.mac!,
              log: { info: (m) => ctx.log.info(`${name}: ${m}`), warn: (m) => ctx.log.warn(`${name}: ${m}`) },
              onLease: (lease: Lease | null) => {
                entry.acquired = lease ? new Date().toISOString() : undefined;
                ctx.requestReconcile();
              },
              ...(o.retryMs ? { retryMs: o.retryMs } : {}),
            });
            clients.set(name, entry);
            entry.client.start();
          }
          const out = outputSet(ctx, OUTPUTS);
          const put = (ns: string, type: string, id: string, spec: object) =>
            out.put(ns, type, id, type === DHCP_LEASE_TYPE ? spec : { ...spec, layer: 'dhcp' });
          for (const [name, { client, acquired }] of clients) {
            await put(NETWORK_NS, DHCP_LEASE_TYPE, name, leaseStatus(client, acquired));
            const l = client.lease;
            if (!l) continue;
            await put(NETWORK_NS, ADDRESS_SPEC_TYPE, `dhcp/${name}`, {
              address: `${l.address}/${l.prefix}`, link: name,
            });
            if (l.router) await put(NETWORK_NS, ROUTE_SPEC_TYPE, `dhcp/default/${name}`, {
              gateway: l.router, link: name,
            });
            if (l.dns.length) await put(NETWORK_NS, RESOLVER_SPEC_TYPE, `dhcp/${name}`, {
              servers: l.dns.slice(0, 3), ...(l.domain ? { searchDomains: [l.domain] } : {}),
            });
            if (l.ntp.length) await put(TIME_NS, TIME_SERVER_SPEC_TYPE, `dhcp/${name}`, { servers: l.ntp });
            if (l.hostname) await put(NETWORK_NS, HOSTNAME_SPEC_TYPE, `dhcp/${name}`, {
              hostname: l.hostname, ...(l.domain ? { domainname: l.domain } : {}),
            });
          }
          await out.cleanup();
        }
      } finally {
        for (const c of clients.values()) c.client.stop(true);
      }
    },
  };
}
