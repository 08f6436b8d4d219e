// router-dns: DNS servers and search domains from IPv6 router advertisements (RFC 8106 RDNSS and
// DNSSL) -> a ResolverSpec per link at the dhcp layer (`ra/<link>`). The kernel acts on the rest of
// an advertisement itself (SLAAC addresses, the default route) and hands these options to user space
// only as RTM_NEWNDUSEROPT messages: they are heard from this controller's start, each kept for its
// lifetime (0 withdraws it) and dropped with its link or when the link ignores advertisements.
import type { Controller } from '../../cosi/controller/contract.ts';
import { procIpv6Conf, type Ipv6Conf } from './ipv6-conf.ts';
import { linksByName } from './link-status.ts';
import type { Rtnl } from './rtnetlink/client.ts';
import type { RaDnsOptions } from './rtnetlink/nduseropt.ts';
import { LINK_STATUS_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

/** Resolvers take three servers (resolv.conf's MAXNS). */
const MAX_SERVERS = 3;

/** What one link's routers said: each server and domain with the time it expires (ms since the epoch). */
export class RouterDns {
  private readonly byLink = new Map<number, { servers: Map<string, number>; domains: Map<string, number> }>();

  heard(o: RaDnsOptions, now: number): void {
    const entry = this.byLink.get(o.index) ?? { servers: new Map(), domains: new Map() };
    this.byLink.set(o.index, entry);
    const keep = (m: Map<string, number>, key: string, lifetime: number) => {
      if (lifetime === 0) m.delete(key);
      else m.set(key, lifetime === 0xffffffff ? Infinity : now + lifetime * 1000);
    };
    for (const s of o.servers) keep(entry.servers, s.address, s.lifetime);
    for (const d of o.domains) keep(entry.domains, d.name, d.lifetime);
  }

  /** The live servers and domains of each link index (expired ones forgotten), and when the next one expires. */
  current(now: number): { links: Map<number, { servers: string[]; domains: string[] }>; nextExpiry: number } {
    const links = new Map<number, { servers: string[]; domains: string[] }>();
    let nextExpiry = Infinity;
    const live = (m: Map<string, number>) => [...m].filter(([key, until]) => {
      if (until <= now) m.delete(key);
      else nextExpiry = Math.min(nextExpiry, until);
      return until > now;
    }).map(([key]) => key);
    for (const [index, e] of this.byLink) {
      const servers = live(e.servers);
      const domains = live(e.domains);
      if (servers.length || domains.length) links.set(index, { servers, domains });
      else this.byLink.delete(index);
    }
    return { links, nextExpiry };
  }

  forget(index: number): void { this.byLink.delete(index); }
}

export function routerDnsController(
  rtnl: () => Pick<Rtnl, 'watchRaDns'>, ipv6: Ipv6Conf = procIpv6Conf, now = () => Date.now(),
): Controller {
  return {
    name: 'router-dns',
    inputs: () => [{ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' }],
    outputs: () => [{ type: RESOLVER_SPEC_TYPE, kind: 'shared' }],
    async run(ctx) {
      const dns = new RouterDns();
      const stop = rtnl().watchRaDns((o) => {
        dns.heard(o, now());
        ctx.requestReconcile();
      });
      let expiry: NodeJS.Timeout | undefined;
      try {
        while (await ctx.next()) {
          const links = await linksByName(ctx.state);
          const names = new Map([...links].map(([name, l]) => [l.index, name]));
          const { links: heard, nextExpiry } = dns.current(now());
          const keep = new Set<string>();
          for (const [index, { servers, domains }] of heard) {
            const name = names.get(index);
            if (!name) continue; // not in LinkStatus yet (or gone): its entries wait, or run out
            if (ipv6.get(name, 'accept_ra') === 0) {
              dns.forget(index);
              continue;
            }
            if (!servers.length) continue; // a search list alone does not make a resolver
            const id = `ra/${name}`;
            keep.add(id);
            await ctx.state.put({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, id }, {
              servers: servers.slice(0, MAX_SERVERS), ...(domains.length ? { searchDomains: domains } : {}),
              layer: 'dhcp',
            });
          }
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE }, keep);
          clearTimeout(expiry);
          if (nextExpiry !== Infinity) {
            expiry = setTimeout(() => ctx.requestReconcile(), Math.min(nextExpiry - now() + 10, 2 ** 31 - 1));
          }
        }
      } finally {
        clearTimeout(expiry);
        stop();
      }
    },
  };
}
