// platform-network: PlatformNetwork "platform" (what NoCloud's network-config or a
// metadata service says) -> network and time specs at the platform layer, which the
// network and time plugins merge with the other layers: per interface (matched by name,
// or by MAC through LinkStatus) DhcpSpec, AddressSpec, RouteSpec and LinkSpec (MTU);
// HostnameSpec, ResolverSpec and TimeServerSpec for the machine.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { type LinkStatusSpec } from '../network/types.ts';
import { outputSet } from '../sdk/output-set.ts';
import { type PlatformNetworkSpec } from './types.ts';
import {
  ADDRESS_SPEC_TYPE, DHCP_SPEC_TYPE, HOSTNAME_SPEC_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS,
  PLATFORM_NETWORK_TYPE, PLATFORM_NS, RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, TIME_NS, TIME_SERVER_SPEC_TYPE,
} from '../../proto/gen/resource-types.ts';
import { PLATFORM_ID } from '../../machinery/model/singleton-ids.ts';

const OUTPUTS = [
  [NETWORK_NS, ADDRESS_SPEC_TYPE], [NETWORK_NS, ROUTE_SPEC_TYPE], [NETWORK_NS, DHCP_SPEC_TYPE],
  [NETWORK_NS, LINK_SPEC_TYPE], [NETWORK_NS, HOSTNAME_SPEC_TYPE], [NETWORK_NS, RESOLVER_SPEC_TYPE],
  [TIME_NS, TIME_SERVER_SPEC_TYPE],
] as const;

export interface PlatformSpecDoc { namespace: string; type: string; id: string; spec: Record<string, unknown> }

/** The specs a platform network gives on a machine with these links (pure: tested on its own). */
export function platformSpecs(n: PlatformNetworkSpec, links: readonly Resource<LinkStatusSpec>[]): PlatformSpecDoc[] {
  const out: PlatformSpecDoc[] = [];
  const add = (namespace: string, type: string, id: string, spec: Record<string, unknown>) =>
    out.push({ namespace, type, id, spec: { ...spec, layer: 'platform' } });
  for (const i of n.interfaces ?? []) {
    const link = i.mac ? links.find((l) => l.spec.mac?.toLowerCase() === i.mac)?.metadata.id
      : links.find((l) => l.metadata.id === i.name)?.metadata.id ?? i.name;
    if (!link) continue; // matched by a MAC no link has (yet): LinkStatus wakes us when one appears
    const static_ = (i.addresses ?? []).length > 0;
    add(NETWORK_NS, DHCP_SPEC_TYPE, `platform/${link}`, { enabled: i.dhcp4 || !static_, link });
    for (const a of i.addresses ?? []) {
      add(NETWORK_NS, ADDRESS_SPEC_TYPE, `platform/${link}/${a}`, { address: a, link });
    }
    for (const r of i.routes ?? []) {
      add(NETWORK_NS, ROUTE_SPEC_TYPE, `platform/${link}/${r.to ?? 'default'}`, {
        ...(r.to ? { destination: r.to } : {}), gateway: r.via, link,
        ...(r.metric !== undefined ? { metric: r.metric } : {}),
      });
    }
    if (i.mtu !== undefined) add(NETWORK_NS, LINK_SPEC_TYPE, `platform/${link}`, { mtu: i.mtu, link });
  }
  if (n.hostname) {
    const [host, ...domain] = n.hostname.split('.');
    add(NETWORK_NS, HOSTNAME_SPEC_TYPE, 'platform',
      { hostname: host, ...(domain.length ? { domainname: domain.join('.') } : {}) });
  }
  if (n.nameservers?.length) {
    add(NETWORK_NS, RESOLVER_SPEC_TYPE, 'platform', {
      servers: n.nameservers.slice(0, 3),
      ...(n.searchDomains?.length ? { searchDomains: n.searchDomains.slice(0, 6) } : {}),
    });
  }
  if (n.timeServers?.length) add(TIME_NS, TIME_SERVER_SPEC_TYPE, 'platform', { servers: n.timeServers.slice(0, 8) });
  return out;
}

export function platformNetworkController(): Controller {
  return {
    name: 'platform-network',
    inputs: () => [
      { namespace: PLATFORM_NS, type: PLATFORM_NETWORK_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => OUTPUTS.map(([, type]) => ({ type, kind: 'shared' as const })),
    async run(ctx) {
      while (await ctx.next()) {
        const n = await ctx.state.find({ namespace: PLATFORM_NS, type: PLATFORM_NETWORK_TYPE, id: PLATFORM_ID });
        const links = await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE }) as
          Resource<LinkStatusSpec>[];
        const out = outputSet(ctx, OUTPUTS);
        for (const d of n ? platformSpecs(n.spec as PlatformNetworkSpec, links) : []) {
          await out.put(d.namespace, d.type, d.id, d.spec);
        }
        await out.cleanup();
      }
    },
  };
}
