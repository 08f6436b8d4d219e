// link: RTM_*LINK messages (rtnetlink(7)): struct ifinfomsg and the IFLA_* attributes
// the network plugin reads and writes.
import { attr, attrMap, NLM_F, encodeMessage, readStr, readU32, readU8 } from '../../../machinery/netlink/netlink.ts';

export const RTM = {
  NEWLINK: 16, DELLINK: 17, GETLINK: 18, NEWADDR: 20, DELADDR: 21, GETADDR: 22,
  NEWROUTE: 24, DELROUTE: 25, GETROUTE: 26,
} as const;
export const RTNLGRP = { LINK: 1, IPV4_IFADDR: 5, IPV4_ROUTE: 7, IPV6_IFADDR: 9, IPV6_ROUTE: 11 } as const;
export const IFF = {
  UP: 0x1, BROADCAST: 0x2, LOOPBACK: 0x8, POINTOPOINT: 0x10, RUNNING: 0x40, NOARP: 0x80, MULTICAST: 0x1000,
  LOWER_UP: 0x10000,
} as const;
export const IFLA = {
  ADDRESS: 1, BROADCAST: 2, IFNAME: 3, MTU: 4, LINK: 5, MASTER: 10, OPERSTATE: 16, LINKINFO: 18, CARRIER: 33,
} as const;
const IFLA_INFO_KIND = 1;
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
  const kind = info ? readStr(attrMap(info).get(IFLA_INFO_KIND)) : undefined;
  return {
    index, name: readStr(a.get(IFLA.IFNAME)) ?? `if${index}`, type: ARPHRD[type] ?? `arphrd-${type}`, flags,
    up: (flags & IFF.UP) !== 0,
    operState: OPERSTATE[readU8(a.get(IFLA.OPERSTATE)) ?? 0] ?? 'unknown',
    ...(mtu !== undefined ? { mtu } : {}),
    ...(mac && mac.length ? { mac: macString(mac) } : {}),
    ...(carrier !== undefined ? { carrier: carrier === 1 } : {}),
    ...(kind ? { kind } : {}),
    ...(master ? { masterIndex: master } : {}),
  };
}

export function getLinksRequest(seq: number): Buffer {
  return encodeMessage(RTM.GETLINK, NLM_F.REQUEST | NLM_F.DUMP, seq, ifinfomsg());
}

/** Changes flags/MTU of an existing link (RTM_NEWLINK on its index). */
export function setLinkRequest(seq: number, index: number, change: { up?: boolean; mtu?: number }): Buffer {
  const attrs: Buffer[] = [];
  if (change.mtu !== undefined) attrs.push(attr.u32(IFLA.MTU, change.mtu));
  const up = change.up === undefined ? {} : { flags: change.up ? IFF.UP : 0, change: IFF.UP };
  return encodeMessage(
    RTM.NEWLINK, NLM_F.REQUEST | NLM_F.ACK, seq, Buffer.concat([ifinfomsg({ index, ...up }), ...attrs]),
  );
}

/** Creates a virtual link of `kind` (dummy, bridge, ...), as `ip link add NAME type KIND` does. */
export function createLinkRequest(seq: number, name: string, kind: string, mtu?: number): Buffer {
  const attrs = [
    attr.str(IFLA.IFNAME, name), attr.nested(IFLA.LINKINFO, attr.str(IFLA_INFO_KIND, kind)),
    ...(mtu ? [attr.u32(IFLA.MTU, mtu)] : []),
  ];
  return encodeMessage(
    RTM.NEWLINK, NLM_F.REQUEST | NLM_F.ACK | NLM_F.CREATE | NLM_F.EXCL, seq, Buffer.concat([ifinfomsg(), ...attrs]),
  );
}

export function deleteLinkRequest(seq: number, index: number): Buffer {
  return encodeMessage(RTM.DELLINK, NLM_F.REQUEST | NLM_F.ACK, seq, ifinfomsg({ index }));
}
