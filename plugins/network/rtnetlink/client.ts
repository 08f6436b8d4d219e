// client: rtnetlink over the native socket wrappers. Requests go out on one socket
// and get their answer synchronously; kernel notifications arrive on another.
import type { Native } from '../../../native/index.ts';
import {
  createLinkRequest, decodeLink, deleteLinkRequest, getLinksRequest, RTM, RTNLGRP, setLinkRequest, type LinkChange,
  type LinkMessage, type NewLink,
} from './link.ts';
import { addressRequest, decodeAddress, getAddressesRequest, type AddressMessage } from './addr.ts';
import {
  decodeRoute, getRoutesRequest, routeRequest, RT_TABLE_LOCAL, type RouteMessage, type RouteWant,
} from './route.ts';
import { decodeRule, getRulesRequest, ruleRequest, RTM_RULE, type RuleMessage, type RuleWant } from './rule.ts';
import { answerOf, decodeMessages, type NetlinkMessage } from '../../../machinery/netlink/netlink.ts';
import { decodeNdUserOpt, RTM_NEWNDUSEROPT, type RaDnsOptions } from './nduseropt.ts';

const NETLINK_ROUTE = 0;

export interface LinkEvent { type: 'new' | 'del'; link: LinkMessage }

export class Rtnl {
  private readonly fd: number;
  private seq = Math.floor(Math.random() * 1e6);

  constructor(private readonly n: Native, private readonly timeoutMs = 2000) {
    this.fd = n.netlinkOpen(NETLINK_ROUTE);
  }

  close(): void { this.n.closeFd(this.fd); }

  /** Sends a request built for a fresh sequence number; returns the answer's messages, or throws the kernel's errno. */
  request(build: (seq: number) => Buffer, what: string): NetlinkMessage[] {
    const seq = ++this.seq;
    return answerOf(this.n.netlinkRequest(this.fd, build(seq), this.timeoutMs), seq, what);
  }

  links(): LinkMessage[] {
    return this.request(getLinksRequest, 'list links')
      .filter((m) => m.type === RTM.NEWLINK).map((m) => decodeLink(m.payload));
  }

  setLink(index: number, change: LinkChange): void {
    const { kind, ...plain } = change;
    this.request((seq) => setLinkRequest(seq, index, change),
      `set link ${index} ${JSON.stringify(plain)}${kind ? ` (${kind.kind} settings)` : ''}`);
  }

  createLink(l: NewLink): void {
    this.request((seq) => createLinkRequest(seq, l), `create link ${l.name} (${l.kind})`);
  }

  deleteLink(index: number): void {
    this.request((seq) => deleteLinkRequest(seq, index), `delete link ${index}`);
  }

  addresses(): AddressMessage[] {
    return this.request(getAddressesRequest, 'list addresses')
      .filter((m) => m.type === RTM.NEWADDR).map((m) => decodeAddress(m.payload));
  }

  address(op: 'add' | 'del', index: number, address: string, prefix: number): void {
    this.request(
      (seq) => addressRequest(seq, op, index, address, prefix), `${op} address ${address}/${prefix} on link ${index}`,
    );
  }

  /** Routes of every table but the kernel's own local one. */
  routes(family: 4 | 6): RouteMessage[] {
    return this.request((seq) => getRoutesRequest(seq, family), `list IPv${family} routes`)
      .filter((m) => m.type === RTM.NEWROUTE).map((m) => decodeRoute(m.payload))
      .filter((r) => r.table !== RT_TABLE_LOCAL);
  }

  route(op: 'add' | 'del', r: RouteWant): void {
    this.request((seq) => routeRequest(seq, op, r), `${op} route ${describeRoute(r)}`);
  }

  rules(family: 4 | 6): RuleMessage[] {
    return this.request((seq) => getRulesRequest(seq, family), `list IPv${family} rules`)
      .filter((m) => m.type === RTM_RULE.NEW).map((m) => decodeRule(m.payload));
  }

  rule(op: 'add' | 'del', r: RuleWant): void {
    this.request((seq) => ruleRequest(seq, op, r), `${op} rule ${describeRule(r)}`);
  }

  /** Kernel link notifications (RTNLGRP_LINK, and RTNLGRP_IPV6_IFINFO: a router advertisement changed a link's
   * IPv6 flags) until stop() is called; with `addresses`, address changes (IPv4 and IPv6) call onAddress too. */
  watchLinks(onEvent: (e: LinkEvent) => void, onAddress?: (index: number) => void): () => void {
    const groups = [RTNLGRP.LINK, RTNLGRP.IPV6_IFINFO,
      ...(onAddress ? [RTNLGRP.IPV4_IFADDR, RTNLGRP.IPV6_IFADDR] : [])];
    return this.watch(groups, (m) => {
      if (m.type === RTM.NEWLINK || m.type === RTM.DELLINK) {
        onEvent({ type: m.type === RTM.NEWLINK ? 'new' : 'del', link: decodeLink(m.payload) });
      } else if (onAddress && (m.type === RTM.NEWADDR || m.type === RTM.DELADDR)) {
        onAddress(decodeAddress(m.payload).index);
      }
    });
  }

  /** Called on every route added or deleted (IPv4 and IPv6, any table) until stop() is called. */
  watchRoutes(onChange: () => void): () => void {
    return this.watch([RTNLGRP.IPV4_ROUTE, RTNLGRP.IPV6_ROUTE], (m) => {
      if (m.type === RTM.NEWROUTE || m.type === RTM.DELROUTE) onChange();
    });
  }

  /** The DNS options of every router advertisement from now on (RDNSS, DNSSL: RTNLGRP_ND_USEROPT). */
  watchRaDns(onOptions: (o: RaDnsOptions) => void): () => void {
    return this.watch([RTNLGRP.ND_USEROPT], (m) => {
      const o = m.type === RTM_NEWNDUSEROPT ? decodeNdUserOpt(m.payload) : undefined;
      if (o) onOptions(o);
    });
  }

  /** A socket joined to `groups`, each message to onMessage (on the main thread) until stop(). */
  private watch(groups: number[], onMessage: (m: NetlinkMessage) => void): () => void {
    const fd = this.n.netlinkOpen(NETLINK_ROUTE, groups);
    const stop = this.n.subscribeDatagrams(fd, (datagram) => {
      for (const m of decodeMessages(datagram)) onMessage(m);
    });
    return () => {
      stop();
      this.n.closeFd(fd);
    };
  }
}

/** A route as `ip route` prints it, for messages. */
export function describeRoute(r: RouteWant): string {
  return [r.kind && r.kind !== 'unicast' ? r.kind : '', `${r.dst}/${r.dstLen}`, r.gateway ? `via ${r.gateway}` : '',
    r.oif !== undefined ? `dev ${r.oif}` : '', r.table ? `table ${r.table}` : '',
    r.metric !== undefined ? `metric ${r.metric}` : '', r.onLink ? 'onlink' : '', r.source ? `src ${r.source}` : '',
    r.mtu ? `mtu ${r.mtu}` : ''].filter(Boolean).join(' ');
}

/** A rule as `ip rule` prints it, for messages. */
export function describeRule(r: RuleWant): string {
  return [r.priority !== undefined ? `${r.priority}:` : '', `from ${r.from ? `${r.from.ip}/${r.from.prefix}` : 'all'}`,
    r.to ? `to ${r.to.ip}/${r.to.prefix}` : '', r.mark !== undefined ? `fwmark ${r.mark}` : '',
    r.tos ? `tos ${r.tos}` : '', `lookup ${r.table}`].filter(Boolean).join(' ');
}

/** What the network controllers use of rtnetlink: the real socket (Rtnl) or, in tests
 * that run without root, an in-memory kernel (memory-kernel.ts). */
export type RtnlApi = Pick<
  Rtnl, 'links' | 'addresses' | 'routes' | 'rules' | 'setLink' | 'createLink' | 'deleteLink' | 'address' | 'route'
    | 'rule' | 'watchLinks' | 'watchRoutes'
>;
