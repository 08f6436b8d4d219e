// dhcp6-spec: MergedDhcpSpec's ipv6 -> a DHCPv6 client on every link that asks for one (and is up);
// what it gets becomes AddressSpecs (/128), a ResolverSpec and a TimeServerSpec at the dhcp layer,
// and a Dhcp6Lease status. `auto` follows the link's router advertisements (LinkStatus.ipv6Router:
// M -> stateful, O -> stateless, neither -> no client; a link that takes none runs stateful, as
// networkd does); a client whose mode changes starts over. The kernel forgets the advertisement's
// flags when the carrier goes: a running client keeps its mode until the next advertisement says
// otherwise (a cable pulled for a second does not release the lease).
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { outputSet } from '../sdk/output-set.ts';
import { Dhcp6Client, type Dhcp6Mode } from './dhcp6/client.ts';
import { udp6Transport, type Dhcp6Transport } from './dhcp6/udp6.ts';
import { procIpv6Conf, type Ipv6Conf } from './ipv6-conf.ts';
import { linksByName } from './link-status.ts';
import type { Dhcp6LeaseSpec, DhcpSpecSpec, LinkStatusSpec } from './types.ts';
import {
  ADDRESS_SPEC_TYPE, DHCP6_LEASE_TYPE, MERGED_DHCP_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE,
  TIME_NS, TIME_SERVER_SPEC_TYPE,
} from '../../proto/gen/resource-types.ts';

export interface Dhcp6SpecOptions {
  /** The socket the clients share; by default port 546 of this network namespace, opened on first use. */
  transport?: Dhcp6Transport;
  /** Where accept_ra is read (tests without root pass a memory one). */
  ipv6?: Ipv6Conf;
  timeScale?: number;
}

const OUTPUTS = [
  [NETWORK_NS, ADDRESS_SPEC_TYPE], [NETWORK_NS, RESOLVER_SPEC_TYPE], [TIME_NS, TIME_SERVER_SPEC_TYPE],
  [NETWORK_NS, DHCP6_LEASE_TYPE],
] as const;

/**
 * The mode a link's client runs in: as asked, or (auto) as its router advertisements say, or stateful where the
 * link takes none (accept_ra 0: no advertisement will ever say); undefined for no client.
 */
export function dhcp6ModeOf(
  asked: string | undefined, link: LinkStatusSpec, takesRa = true,
): Dhcp6Mode | undefined {
  if (asked === 'stateful' || asked === 'stateless') return asked;
  if (asked !== 'auto') return undefined;
  if (!takesRa) return 'stateful';
  return link.ipv6Router === 'managed' ? 'stateful' : link.ipv6Router === 'other' ? 'stateless' : undefined;
}

interface Entry { client: Dhcp6Client; index: number; mode: Dhcp6Mode; acquired?: string }

export function leaseStatus6(e: Entry): Dhcp6LeaseSpec {
  const l = e.client.lease;
  return {
    state: e.client.state, mode: e.mode, addresses: l?.addresses.map((a) => `${a.address}/128`) ?? [],
    dns: l?.dns ?? [], domains: l?.domains ?? [], ntp: l?.ntp ?? [],
    ...(l?.serverId.length ? { server: l.serverId.toString('hex') } : {}),
    ...(l ? { lifetimeSeconds: l.lifetime } : {}),
    ...(e.acquired ? { acquired: e.acquired } : {}),
  };
}

export function dhcp6SpecController(o: Dhcp6SpecOptions = {}): Controller {
  return {
    name: 'dhcp6-spec',
    inputs: () => [
      { namespace: NETWORK_NS, type: MERGED_DHCP_SPEC_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => OUTPUTS.map(([, type]) => ({
      type, kind: type === DHCP6_LEASE_TYPE ? 'exclusive' as const : 'shared' as const,
    })),
    async run(ctx) {
      const transport = o.transport ?? udp6Transport(ctx.log);
      const clients = new Map<string, Entry>();
      try {
        while (await ctx.next()) {
          const links = await linksByName(ctx.state);
          const specs = await ctx.state.list({ namespace: NETWORK_NS, type: MERGED_DHCP_SPEC_TYPE }) as
            Resource<DhcpSpecSpec>[];
          const asked = new Map(specs.filter((r) => r.metadata.phase === 'running' && r.spec.ipv6
            && r.spec.ipv6 !== 'off').map((r) => [r.metadata.id, r.spec.ipv6!]));
          const want = new Map<string, Dhcp6Mode>();
          const ipv6 = o.ipv6 ?? procIpv6Conf;
          for (const [name, mode] of asked) {
            const link = links.get(name);
            if (!link?.up || !link.mac) continue;
            const running = clients.get(name);
            const m = dhcp6ModeOf(mode, link, ipv6.get(name, 'accept_ra') !== 0)
              // No advertisement on record (the carrier went): a client of the same link keeps its mode.
              ?? (mode === 'auto' && link.ipv6Router === undefined && running?.index === link.index
                ? running.mode : undefined);
            if (m) want.set(name, m);
          }
          for (const [name, c] of clients) {
            if (want.get(name) !== c.mode || links.get(name)?.index !== c.index) {
              c.client.stop(true);
              clients.delete(name);
            }
          }
          for (const [name, mode] of want) {
            if (clients.has(name)) continue;
            const link = links.get(name)!;
            const entry = { index: link.index, mode } as Entry;
            entry.client = new Dhcp6Client({
              transport, link: name, mac: link.mac!, mode,
              log: {
                info: (m) => ctx.log.info(`${name}: DHCPv6 ${m}`), warn: (m) => ctx.log.warn(`${name}: DHCPv6 ${m}`),
              },
              onChange: () => {
                entry.acquired = entry.client.lease ? new Date().toISOString() : undefined;
                ctx.requestReconcile();
              },
              ...(o.timeScale ? { timeScale: o.timeScale } : {}),
            });
            clients.set(name, entry);
            entry.client.start();
          }
          const out = outputSet(ctx, OUTPUTS);
          const put = (ns: string, type: string, id: string, spec: object) =>
            out.put(ns, type, id, { ...spec, layer: 'dhcp' });
          for (const [name, mode] of asked) {
            if (!clients.has(name) && links.has(name)) {
              await out.put(NETWORK_NS, DHCP6_LEASE_TYPE, name, { state: 'waiting', mode, addresses: [], dns: [],
                domains: [], ntp: [] });
            }
          }
          for (const [name, entry] of clients) {
            await out.put(NETWORK_NS, DHCP6_LEASE_TYPE, name, leaseStatus6(entry));
            const l = entry.client.lease;
            if (!l) continue;
            for (const a of l.addresses) {
              await put(NETWORK_NS, ADDRESS_SPEC_TYPE, `dhcp6/${name}/${a.address}`, {
                address: `${a.address}/128`, link: name,
              });
            }
            if (l.dns.length) await put(NETWORK_NS, RESOLVER_SPEC_TYPE, `dhcp6/${name}`, {
              servers: l.dns.slice(0, 3), ...(l.domains.length ? { searchDomains: l.domains } : {}),
            });
            if (l.ntp.length) await put(TIME_NS, TIME_SERVER_SPEC_TYPE, `dhcp6/${name}`, { servers: l.ntp });
          }
          await out.cleanup();
        }
      } finally {
        for (const c of clients.values()) c.client.stop(true);
      }
    },
  };
}
