// link: RTM_*LINK messages (rtnetlink(7)): struct ifinfomsg and the IFLA_* attributes
// the network plugin reads and writes.
import { attr, attrMap, NLM_F, encodeMessage, readStr, readU32, readU8 } from '../../../machinery/netlink/netlink.ts';
import { decodeKindData, decodePortState, type KindInfo } from './link-kinds.ts';

export const RTM = {
  NEWLINK: 16, DELLINK: 17, GETLINK: 18, NEWADDR: 20, DELADDR: 21, GETADDR: 22,
  NEWROUTE: 24, DELROUTE: 25, GETROUTE: 26,
} as const;
export const RTNLGRP = {
  LINK: 1, IPV4_IFADDR: 5, IPV4_ROUTE: 7, IPV6_IFADDR: 9, IPV6_ROUTE: 11, IPV6_IFINFO: 12, ND_USEROPT: 20,
} as const;
export const IFF = {
  UP: 0x1, BROADCAST: 0x2, LOOPBACK: 0x8, POINTOPOINT: 0x10, RUNNING: 0x40, NOARP: 0x80, MULTICAST: 0x1000,
  LOWER_UP: 0x10000,
} as const;
export const IFLA = {
  ADDRESS: 1, BROADCAST: 2, IFNAME: 3, MTU: 4, LINK: 5, MASTER: 10, OPERSTATE: 16, LINKINFO: 18, AF_SPEC: 26,
  CARRIER: 33,
} as const;
const AF_INET6 = 10;
const IFLA_INET6_FLAGS = 1;
/** The kernel's IPv6 per-link flags (include/net/if_inet6.h): a router advertisement arrived, with M or O. */
export const IF_RA = { RCVD: 0x20, MANAGED: 0x40, OTHERCONF: 0x80 } as const;

/** What the last router advertisement asked of DHCPv6, from the kernel's IF_RA_* flags; undefined before one. */
export function ipv6RouterOf(flags: number | undefined): 'managed' | 'other' | 'none' | undefined {
  if (flags === undefined || !(flags & IF_RA.RCVD)) return undefined;
  if (flags & IF_RA.MANAGED) return 'managed';
  return flags & IF_RA.OTHERCONF ? 'other' : 'none';
}
const IFLA_INFO = { KIND: 1, DATA: 2, SLAVE_KIND: 4, SLAVE_DATA: 5 } as const;
export const ARPHRD: Record<number, string> = { 1: 'ether', 772: 'loopback', 65534: 'none' };
/** RFC 2863 operational states (IF_OPER_*). */
export const OPERSTATE = ['unknown', 'notpresent', 'down', 'lowerlayerdown', 'testing', 'dormant', 'up'] as const;

export interface LinkMessage {
  index: number;
  name: string;
  type: string;
  flags: number;
  up: boolean;
  mtu?: number;
  mac?: string;
  operState: (typeof OPERSTATE)[number];
  carrier?: boolean;
  kind?: string;
  masterIndex?: number;
  /** IFLA_LINK: the link a VLAN (or veth peer) is on. */
  parentIndex?: number;
  /** What its kind reports (VLAN id, bond mode and active port, bridge STP). */
  info?: KindInfo;
  /** A bond port's state. */
  portState?: 'active' | 'backup';
  /** The IPv6 flags (IFLA_AF_SPEC / AF_INET6 / IFLA_INET6_FLAGS): router advertisement seen, M, O. */
  ipv6Flags?: number;
}

const IFINFOMSG = 16;

export function ifinfomsg(
  o: { family?: number; type?: number; index?: number; flags?: number; change?: number } = {},
): Buffer {
  const b = Buffer.alloc(IFINFOMSG);
  b[0] = o.family ?? 0;
  b.writeUInt16LE(o.type ?? 0, 2);
  b.writeInt32LE(o.index ?? 0, 4);
  b.writeUInt32LE(o.flags ?? 0, 8);
  b.writeUInt32LE(o.change ?? 0, 12);
  return b;
}

export const macString = (b: Buffer) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');

export function decodeLink(payload: Buffer): LinkMessage {
  const type = payload.readUInt16LE(2);
  const index = payload.readInt32LE(4);
  const flags = payload.readUInt32LE(8);
  const a = attrMap(payload.subarray(IFINFOMSG));
  const info = a.get(IFLA.LINKINFO);
  const mac = a.get(IFLA.ADDRESS);
  const carrier = readU8(a.get(IFLA.CARRIER));
  const mtu = readU32(a.get(IFLA.MTU));
  const master = readU32(a.get(IFLA.MASTER));
  const parent = readU32(a.get(IFLA.LINK));
  const infos = info ? attrMap(info) : undefined;
  const kind = readStr(infos?.get(IFLA_INFO.KIND));
  const kindInfo = decodeKindData(kind, infos?.get(IFLA_INFO.DATA));
  const portState = decodePortState(readStr(infos?.get(IFLA_INFO.SLAVE_KIND)), infos?.get(IFLA_INFO.SLAVE_DATA));
  const afSpec = a.get(IFLA.AF_SPEC);
  const inet6 = afSpec ? attrMap(afSpec).get(AF_INET6) : undefined;
  const ipv6Flags = inet6 ? readU32(attrMap(inet6).get(IFLA_INET6_FLAGS)) : undefined;
  return {
    index, name: readStr(a.get(IFLA.IFNAME)) ?? `if${index}`, type: ARPHRD[type] ?? `arphrd-${type}`, flags,
    up: (flags & IFF.UP) !== 0,
    operState: OPERSTATE[readU8(a.get(IFLA.OPERSTATE)) ?? 0] ?? 'unknown',
    ...(mtu !== undefined ? { mtu } : {}),
    ...(mac && mac.length ? { mac: macString(mac) } : {}),
    ...(carrier !== undefined ? { carrier: carrier === 1 } : {}),
    ...(kind ? { kind } : {}),
    ...(master ? { masterIndex: master } : {}),
    ...(parent && parent !== index ? { parentIndex: parent } : {}),
    ...(Object.keys(kindInfo).length ? { info: kindInfo } : {}),
    ...(portState ? { portState } : {}),
    ...(ipv6Flags !== undefined ? { ipv6Flags } : {}),
  };
}

export function getLinksRequest(seq: number): Buffer {
  return encodeMessage(RTM.GETLINK, NLM_F.REQUEST | NLM_F.DUMP, seq, ifinfomsg());
}

/** What may change on an existing link: up/down, MTU, the master it is a port of (0: none), its kind's data. */
export interface LinkChange { up?: boolean; mtu?: number; master?: number; kind?: { kind: string; data: Buffer[] } }

/** Changes an existing link (RTM_NEWLINK on its index). */
export function setLinkRequest(seq: number, index: number, change: LinkChange): Buffer {
  const attrs: Buffer[] = [];
  if (change.mtu !== undefined) attrs.push(attr.u32(IFLA.MTU, change.mtu));
  if (change.master !== undefined) attrs.push(attr.u32(IFLA.MASTER, change.master));
  if (change.kind) attrs.push(linkInfo(change.kind.kind, change.kind.data));
  const up = change.up === undefined ? {} : { flags: change.up ? IFF.UP : 0, change: IFF.UP };
  return encodeMessage(
    RTM.NEWLINK, NLM_F.REQUEST | NLM_F.ACK, seq, Buffer.concat([ifinfomsg({ index, ...up }), ...attrs]),
  );
}

const linkInfo = (kind: string, data: Buffer[]) => attr.nested(IFLA.LINKINFO, attr.str(IFLA_INFO.KIND, kind),
  ...(data.length ? [attr.nested(IFLA_INFO.DATA, ...data)] : []));

/** A virtual link to create: its kind, and what the kind needs (a VLAN's parent link and id, a bond's mode). */
export interface NewLink { name: string; kind: string; mtu?: number; parent?: number; data?: Buffer[] }

/** Creates a virtual link (dummy, bridge, bond, vlan, ...), as `ip link add NAME [link PARENT] type KIND ...` does. */
export function createLinkRequest(seq: number, l: NewLink): Buffer {
  const attrs = [
    attr.str(IFLA.IFNAME, l.name), linkInfo(l.kind, l.data ?? []),
    ...(l.mtu ? [attr.u32(IFLA.MTU, l.mtu)] : []), ...(l.parent ? [attr.u32(IFLA.LINK, l.parent)] : []),
  ];
  return encodeMessage(
    RTM.NEWLINK, NLM_F.REQUEST | NLM_F.ACK | NLM_F.CREATE | NLM_F.EXCL, seq, Buffer.concat([ifinfomsg(), ...attrs]),
  );
}

export function deleteLinkRequest(seq: number, index: number): Buffer {
  return encodeMessage(RTM.DELLINK, NLM_F.REQUEST | NLM_F.ACK, seq, ifinfomsg({ index }));
}
