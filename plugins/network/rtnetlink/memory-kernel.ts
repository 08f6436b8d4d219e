// memory-kernel: an in-memory stand-in for the kernel's links, addresses and routes,
// behind the same RtnlApi the controllers use. It answers as the kernel does where the
// controllers depend on it (EEXIST for a duplicate address or route, EADDRNOTAVAIL and
// ESRCH for missing ones, ENETUNREACH for a gateway outside every subnet of its link,
// EINVAL for an MTU below 68) and notifies watchers on every change. It lets controller
// tests run without root; the kernel tests in private namespaces stay as well.
import { isIP } from 'node:net';
import { NetlinkError } from '../../../machinery/netlink/netlink.ts';
import { errnoNumber } from '../../../native/errno.ts';
import type { AddressMessage } from './addr.ts';
import { inSubnet } from '../../../machinery/sys/ip-subnet.ts';
import type { LinkEvent, RtnlApi } from './client.ts';
import type { LinkChange, LinkMessage, NewLink } from './link.ts';
import { decodeKindData } from './link-kinds.ts';
import { routeFamily, RT_TABLE_MAIN, RTN, type RouteMessage, type RouteWant } from './route.ts';
import type { RuleMessage, RuleWant } from './rule.ts';

type KernelErrno = 'ESRCH' | 'EEXIST' | 'ENODEV' | 'EINVAL' | 'EADDRNOTAVAIL' | 'ENETUNREACH' | 'ENOENT'
  | 'EOPNOTSUPP' | 'EPERM';
const fail = (code: KernelErrno, what: string) => new NetlinkError(errnoNumber(code)!, code, `${what}: ${code}`);

export class MemoryKernel implements RtnlApi {
  private readonly linkTable = new Map<number, LinkMessage>();
  private addressTable: AddressMessage[] = [];
  private routeTable: RouteMessage[] = [];
  private ruleTable: RuleMessage[] = [];
  private readonly watchers = new Set<{ link: (e: LinkEvent) => void; address?: (index: number) => void }>();
  private readonly routeWatchers = new Set<() => void>();
  private nextIndex = 1;
  /** Every change asked of the kernel, in order, for assertions ("up eth0", "add 10.0.2.99/24 eth0"). */
  readonly changes: string[] = [];
  /** Link kinds the kernel can create now (a module loaded adds one, as the kernel's would). */
  readonly kinds = new Set(['bridge', 'dummy', 'veth']);

  constructor() { this.addLink({ name: 'lo', type: 'loopback', up: false, mtu: 65536 }); }

  /** A link appears (hotplug), down unless said otherwise. */
  addLink(l: { name: string; type?: string; kind?: string; up?: boolean; mtu?: number; mac?: string }): LinkMessage {
    const index = this.nextIndex++;
    const link: LinkMessage = {
      index, name: l.name, type: l.type ?? 'ether', flags: 0, up: l.up ?? false, mtu: l.mtu ?? 1500,
      operState: l.up ? 'up' : 'down',
      ...(l.mac ? { mac: l.mac }
        : l.type === 'loopback' ? {} : { mac: `52:54:00:00:00:${index.toString(16).padStart(2, '0')}` }),
      ...(l.kind ? { kind: l.kind } : {}), carrier: l.up ?? false,
    };
    this.linkTable.set(index, link);
    this.emit({ type: 'new', link });
    return link;
  }

  /** A link goes away with its addresses and routes. */
  removeLink(name: string): void {
    const link = this.byName(name);
    this.linkTable.delete(link.index);
    this.addressTable = this.addressTable.filter((a) => a.index !== link.index);
    this.routeTable = this.routeTable.filter((r) => r.oif !== link.index);
    this.emit({ type: 'del', link });
  }

  byName(name: string): LinkMessage {
    const l = [...this.linkTable.values()].find((x) => x.name === name);
    if (!l) throw fail('ENODEV', `link ${name}`);
    return l;
  }

  links(): LinkMessage[] { return [...this.linkTable.values()].map((l) => ({ ...l })); }
  addresses(): AddressMessage[] { return this.addressTable.map((a) => ({ ...a })); }
  routes(family: 4 | 6): RouteMessage[] {
    return this.routeTable.filter((r) => r.family === family).map((r) => ({ ...r }));
  }
  rules(family: 4 | 6): RuleMessage[] {
    return this.ruleTable.filter((r) => r.family === family).map((r) => ({ ...r }));
  }

  createLink(n: NewLink): void {
    if (!this.kinds.has(n.kind)) throw fail('EOPNOTSUPP', `create link ${n.name} (${n.kind})`);
    if ([...this.linkTable.values()].some((l) => l.name === n.name)) throw fail('EEXIST', `create link ${n.name}`);
    if (n.kind === 'vlan' && (n.parent === undefined || !this.linkTable.has(n.parent))) {
      throw fail('ENODEV', `create link ${n.name} (vlan): no parent`);
    }
    const link = this.addLink({ name: n.name, kind: n.kind, ...(n.mtu ? { mtu: n.mtu } : {}) });
    // What the kind's data says comes back in dumps (a VLAN's id), as the kernel reports it.
    const info = decodeKindData(n.kind, Buffer.concat(n.data ?? []));
    this.linkTable.set(link.index, {
      ...link, ...(n.parent !== undefined ? { parentIndex: n.parent } : {}),
      ...(Object.keys(info).length ? { info } : {}),
    });
    this.changes.push(`create ${n.kind} ${n.name}`);
  }

  deleteLink(index: number): void {
    const l = this.linkTable.get(index);
    if (!l) throw fail('ENODEV', `delete link ${index}`);
    this.removeLink(l.name);
    for (const [i, x] of this.linkTable) {
      if (x.masterIndex === index) this.linkTable.set(i, { ...x, masterIndex: undefined } as LinkMessage);
    }
    this.changes.push(`delete ${l.name}`);
  }

  setLink(index: number, change: LinkChange): void {
    const l = this.linkTable.get(index);
    if (!l) throw fail('ENODEV', `set link ${index}`);
    if (change.mtu !== undefined && change.mtu < 68) throw fail('EINVAL', `set link ${l.name} mtu ${change.mtu}`);
    // vlan_validate(): a VLAN's link info without IFLA_INFO_DATA is refused.
    if (change.kind?.kind === 'vlan' && !change.kind.data.length) throw fail('EINVAL', `set link ${l.name} (vlan)`);
    if (change.master) {
      const m = this.linkTable.get(change.master);
      if (!m) throw fail('ENODEV', `set link ${l.name} master ${change.master}`);
      // The bonding driver takes only ports that are down (it brings them up itself).
      if (m.kind === 'bond' && l.up) throw fail('EPERM', `set link ${l.name} master ${m.name}: it is up`);
    }
    const next = {
      ...l,
      ...(change.up !== undefined ? {
        up: change.up, operState: change.up ? 'up' as const : 'down' as const, carrier: change.up,
      } : {}),
      ...(change.mtu !== undefined ? { mtu: change.mtu } : {}),
      ...(change.master !== undefined ? { masterIndex: change.master || undefined } : {}),
    } as LinkMessage;
    if (change.master && this.linkTable.get(change.master)?.kind === 'bond') {
      Object.assign(next, { up: true, operState: 'up', carrier: true });
    }
    this.linkTable.set(index, next);
    if (change.master !== undefined && change.master !== (l.masterIndex ?? 0)) {
      this.changes.push(change.master ? `master ${l.name} ${this.linkTable.get(change.master)!.name}`
        : `nomaster ${l.name}`);
    }
    if (change.up !== undefined && change.up !== l.up) this.changes.push(`${change.up ? 'up' : 'down'} ${l.name}`);
    if (change.mtu !== undefined && change.mtu !== l.mtu) this.changes.push(`mtu ${l.name} ${change.mtu}`);
    this.emit({ type: 'new', link: next });
  }

  address(op: 'add' | 'del', index: number, address: string, prefix: number): void {
    const l = this.linkTable.get(index);
    if (!l) throw fail('ENODEV', `${op} address on link ${index}`);
    const at = this.addressTable.findIndex((a) => a.index === index && a.address === address && a.prefix === prefix);
    if (op === 'add') {
      if (at >= 0) throw fail('EEXIST', `add address ${address}/${prefix}`);
      this.addressTable.push({ family: isIP(address) === 6 ? 6 : 4, index, address, prefix, scope: 0 });
    } else {
      if (at < 0) throw fail('EADDRNOTAVAIL', `del address ${address}/${prefix}`);
      this.addressTable.splice(at, 1);
      // The kernel drops the routes whose gateway only this address made reachable.
      this.routeTable = this.routeTable
        .filter((r) => r.oif !== index || !r.gateway || this.reachable(r.gateway, index));
    }
    this.changes.push(`${op} ${address}/${prefix} ${l.name}`);
    for (const w of this.watchers) w.address?.(index);
  }

  route(op: 'add' | 'del', r: RouteWant): void {
    const family = routeFamily(r);
    const metric = r.metric ?? 0;
    const table = r.table ?? RT_TABLE_MAIN;
    const kind = r.kind ?? 'unicast';
    const text = `${kind === 'unicast' ? '' : `${kind} `}${r.dst}/${r.dstLen}${r.gateway ? ` via ${r.gateway}` : ''}`
      + `${r.oif !== undefined ? ` oif ${r.oif}` : ''}${table !== RT_TABLE_MAIN ? ` table ${table}` : ''}`
      + ` metric ${metric}${r.onLink ? ' onlink' : ''}`;
    const key = (x: RouteMessage) => x.family === family && x.dst === r.dst && x.dstLen === r.dstLen
      && (x.metric ?? 0) === metric && x.table === table;
    const at = this.routeTable.findIndex(key);
    if (op === 'add') {
      if (kind === 'unicast' && (r.oif === undefined || !this.linkTable.has(r.oif))) {
        throw fail('ENODEV', `add route ${text}`);
      }
      if (at >= 0) throw fail('EEXIST', `add route ${text}`);
      if (r.gateway && !r.onLink && !this.reachable(r.gateway, r.oif!)) throw fail('ENETUNREACH', `add route ${text}`);
      this.routeTable.push({
        family, dst: r.dst, dstLen: r.dstLen, ...(r.gateway ? { gateway: r.gateway } : {}),
        ...(r.oif !== undefined ? { oif: r.oif } : {}), metric, table, protocol: 4, type: RTN[kind],
        ...(r.onLink ? { onLink: true } : {}), ...(r.source ? { source: r.source } : {}),
        ...(r.mtu !== undefined ? { mtu: r.mtu } : {}),
      });
    } else {
      const exact = this.routeTable.findIndex((x) => key(x) && x.oif === r.oif && x.gateway === r.gateway);
      if (exact < 0) throw fail('ESRCH', `del route ${text}`);
      this.routeTable.splice(exact, 1);
    }
    this.changes.push(`${op} route ${text}`);
    for (const w of this.routeWatchers) w();
  }

  rule(op: 'add' | 'del', r: RuleWant): void {
    const want: RuleMessage = {
      family: r.family, table: r.table, action: 1,
      ...(r.from ? { from: r.from.ip, fromLen: r.from.prefix } : {}),
      ...(r.to ? { to: r.to.ip, toLen: r.to.prefix } : {}),
      ...(r.priority !== undefined ? { priority: r.priority } : {}), ...(r.mark !== undefined ? { mark: r.mark } : {}),
      ...(r.tos ? { tos: r.tos } : {}),
    };
    const same = (x: RuleMessage) => JSON.stringify({ ...x, priority: x.priority ?? want.priority })
      === JSON.stringify({ ...want, priority: want.priority ?? x.priority });
    const at = this.ruleTable.findIndex(same);
    const text = `${r.from ? `from ${r.from.ip}/${r.from.prefix} ` : ''}${r.to ? `to ${r.to.ip}/${r.to.prefix} ` : ''}`
      + `lookup ${r.table}`;
    if (op === 'add') {
      if (at >= 0) throw fail('EEXIST', `add rule ${text}`);
      this.ruleTable.push(want);
    } else {
      if (at < 0) throw fail('ENOENT', `del rule ${text}`);
      this.ruleTable.splice(at, 1);
    }
    this.changes.push(`${op} rule ${text}`);
  }

  watchLinks(onEvent: (e: LinkEvent) => void, onAddress?: (index: number) => void): () => void {
    const w = { link: onEvent, ...(onAddress ? { address: onAddress } : {}) };
    this.watchers.add(w);
    return () => {
      this.watchers.delete(w);
    };
  }

  watchRoutes(onChange: () => void): () => void {
    const w = () => onChange();
    this.routeWatchers.add(w);
    return () => {
      this.routeWatchers.delete(w);
    };
  }

  private reachable(gateway: string, oif: number): boolean {
    return this.addressTable.some((a) => a.index === oif && inSubnet(gateway, a.address, a.prefix));
  }

  private emit(e: LinkEvent): void { for (const w of this.watchers) w.link(e); }
}
