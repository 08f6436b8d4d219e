// platform-network: PlatformNetwork "platform" (what NoCloud's network-config or a
// metadata service says) -> network and time specs at the platform layer, which the
// network and time plugins merge with the other layers: per interface (matched by name or
// glob, MAC and driver through LinkStatus) DhcpSpec, AddressSpec, RouteSpec and LinkSpec
// (MTU); RuleSpec, HostnameSpec, ResolverSpec and TimeServerSpec for the machine.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { type LinkStatusSpec } from '../network/types.ts';
import { outputSet } from '../sdk/output-set.ts';
import { type PlatformNetworkSpec } from './types.ts';
import type { PlatformInterface, PlatformRoute } from '../../proto/gen/spec-types.ts';
import { isIP } from 'node:net';
import { globRegExp } from '../../machinery/kernel/modalias.ts';
import {
  ADDRESS_SPEC_TYPE, DHCP_SPEC_TYPE, HOSTNAME_SPEC_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS,
  PLATFORM_NETWORK_TYPE, PLATFORM_NS, RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, RULE_SPEC_TYPE, TIME_NS,
  TIME_SERVER_SPEC_TYPE,
} from '../../proto/gen/resource-types.ts';
import { PLATFORM_ID } from '../../machinery/model/singleton-ids.ts';

const OUTPUTS = [
  [NETWORK_NS, ADDRESS_SPEC_TYPE], [NETWORK_NS, ROUTE_SPEC_TYPE], [NETWORK_NS, DHCP_SPEC_TYPE],
  [NETWORK_NS, LINK_SPEC_TYPE], [NETWORK_NS, HOSTNAME_SPEC_TYPE], [NETWORK_NS, RESOLVER_SPEC_TYPE],
  [NETWORK_NS, RULE_SPEC_TYPE],
  [TIME_NS, TIME_SERVER_SPEC_TYPE],
] as const;

export interface PlatformSpecDoc { namespace: string; type: string; id: string; spec: Record<string, unknown> }

/** A shell glob (netplan's match.name and match.driver: *, ?, [...]) as a whole-string test. */
export function globMatcher(glob: string): (s: string) => boolean {
  const r = globRegExp(glob);
  return (s) => r.test(s);
}

/** The links an interface of the platform's network means: by MAC, name (or glob) and driver, all that are set. */
export function matchLinks(i: PlatformInterface, links: readonly Resource<LinkStatusSpec>[]): string[] {
  if (i.kind) return [i.name]; // a virtual link this config makes, named by it
  const glob = i.name && /[*?[]/.test(i.name) ? globMatcher(i.name) : undefined;
  const driver = i.driver ? globMatcher(i.driver) : undefined;
  if (!i.mac && !glob && !driver) return i.name ? [i.name] : []; // a plain name: the link may appear later
  return links.filter((l) => (!i.mac || l.spec.mac?.toLowerCase() === i.mac)
    && (!i.name || (glob ? glob(l.metadata.id) : l.metadata.id === i.name))
    && (!driver || (l.spec.driver !== undefined && driver(l.spec.driver)))
    // Only links the machine has: a bond or VLAN takes its first port's MAC, and is not what a MAC match means.
    && l.spec.type !== 'loopback' && !l.spec.kind).map((l) => l.metadata.id);
}

const familyOf = (ip: string | undefined) => (ip && isIP(ip.split('/')[0]!) === 6 ? 6 : 4);

/** A route's spec id on its link: family, table, destination and metric, so no two routes share one. */
function routeId(link: string, r: PlatformRoute): string {
  const family = familyOf(r.to ?? r.via ?? r.from);
  return [`platform/${link}/ipv${family}`, ...(r.table ? [`table-${r.table}`] : []),
    r.to ?? 'default', ...(r.metric !== undefined ? [`metric-${r.metric}`] : [])].join('/');
}

/**
 * The specs a platform network gives on a machine with these links (pure: tested on its own). A link two interfaces
 * match belongs to the first (netplan leaves that case undefined); `warn` hears of the second.
 */
export function platformSpecs(
  n: PlatformNetworkSpec, links: readonly Resource<LinkStatusSpec>[], warn: (message: string) => void = () => {},
): PlatformSpecDoc[] {
  const out: PlatformSpecDoc[] = [];
  const claimed = new Map<string, PlatformInterface>();
  /** The link an interface of the config (by its id: a VLAN's parent, a port's bond, a bond's primary) is. */
  const linkOf = (id: string | undefined) => {
    const i = (n.interfaces ?? []).find((x) => x.id === id);
    return i ? matchLinks(i, links)[0] : id;
  };
  const add = (namespace: string, type: string, id: string, spec: Record<string, unknown>) =>
    out.push({ namespace, type, id, spec: { ...spec, layer: 'platform' } });
  for (const i of n.interfaces ?? []) {
    // Matched by MAC, glob or driver to no link (yet): LinkStatus wakes us when one appears.
    for (const link of matchLinks(i, links)) {
      const first = claimed.get(link);
      if (first) {
        warn(`link ${link} is matched by two interfaces of the platform's network config: the first one's `
          + `settings apply (${first.name || first.mac || first.driver}), not those of ${i.name || i.mac || i.driver}`);
        continue;
      }
      claimed.set(link, i);
      // DHCPv4 exactly where the config asks for it: netplan and cloud-init run no DHCP otherwise.
      // DHCPv6 as the config says; unset (a metadata service's interface) leaves the default layer's auto.
      add(NETWORK_NS, DHCP_SPEC_TYPE, `platform/${link}`,
        { enabled: i.dhcp4 === true, link, ...(i.dhcp6 ? { ipv6: i.dhcp6 } : {}) });
      for (const a of i.addresses ?? []) {
        add(NETWORK_NS, ADDRESS_SPEC_TYPE, `platform/${link}/${a}`, { address: a, link });
      }
      for (const r of i.routes ?? []) {
        const drops = r.type !== undefined && r.type !== 'unicast';
        add(NETWORK_NS, ROUTE_SPEC_TYPE, routeId(link, r), {
          ...(r.to ? { destination: r.to } : {}), ...(r.via ? { gateway: r.via } : {}), link: drops ? '' : link,
          ...(r.metric !== undefined ? { metric: r.metric } : {}), ...(r.table !== undefined ? { table: r.table } : {}),
          ...(r.onLink ? { onLink: true } : {}), ...(r.from ? { source: r.from } : {}),
          ...(r.mtu !== undefined ? { mtu: r.mtu } : {}), ...(drops ? { type: r.type } : {}),
        });
      }
      const virtual = i.kind ? {
        kind: i.kind, ...(i.vlan ? { vlan: { id: i.vlan.id, parent: linkOf(i.vlan.parent) } } : {}),
        ...(i.bond ? { bond: { ...i.bond, ...(i.bond.primary ? { primary: linkOf(i.bond.primary) } : {}) } } : {}),
        ...(i.bridge ? { bridge: i.bridge } : {}),
      } : {};
      const master = i.master ? { master: linkOf(i.master) } : {};
      const acceptRa = i.acceptRa !== undefined ? { acceptRa: i.acceptRa } : {};
      if (i.mtu !== undefined || i.kind || i.master || i.acceptRa !== undefined) {
        add(NETWORK_NS, LINK_SPEC_TYPE, `platform/${link}`,
          { link, ...(i.mtu !== undefined ? { mtu: i.mtu } : {}), ...virtual, ...master, ...acceptRa });
      }
    }
  }
  for (const [k, r] of (n.rules ?? []).entries()) {
    add(NETWORK_NS, RULE_SPEC_TYPE, `platform/${k}`, {
      ...(r.from ? { from: r.from } : {}), ...(r.to ? { to: r.to } : {}), table: r.table,
      ...(r.priority !== undefined ? { priority: r.priority } : {}), ...(r.mark !== undefined ? { mark: r.mark } : {}),
      ...(r.tos !== undefined ? { tos: r.tos } : {}),
    });
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
        for (const d of n ? platformSpecs(n.spec as PlatformNetworkSpec, links, (m) => ctx.log.warn(m)) : []) {
          await out.put(d.namespace, d.type, d.id, d.spec);
        }
        await out.cleanup();
      }
    },
  };
}
