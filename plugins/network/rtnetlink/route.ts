// route: RTM_*ROUTE messages: struct rtmsg and the RTA_* attributes (rtnetlink(7)).
import { isIP } from 'node:net';
import { AF, ipBytes, ipString } from './addr.ts';
import { RTM } from './link.ts';
import { attr, attrMap, encodeMessage, NLM_F, readU32 } from '../../../machinery/netlink/netlink.ts';

const RTA = { DST: 1, OIF: 4, GATEWAY: 5, PRIORITY: 6, PREFSRC: 7, METRICS: 8, TABLE: 15 } as const;
const RTAX_MTU = 2;
export const RT_TABLE_MAIN = 254;
export const RT_TABLE_LOCAL = 255;
const RTPROT_STATIC = 4;
const RT_SCOPE = { UNIVERSE: 0, LINK: 253 } as const;
/** The kernel's RTN_* route types this system declares. */
export const RTN = { unicast: 1, blackhole: 6, unreachable: 7, prohibit: 8 } as const;
export type RouteKind = keyof typeof RTN;
const RTNH_F_ONLINK = 4;
const RTMSG = 12;

export interface RouteMessage {
  family: 4 | 6; dst: string; dstLen: number; gateway?: string; oif?: number; metric?: number;
  table: number; protocol: number; type: number; onLink?: boolean; source?: string; mtu?: number;
}

export function decodeRoute(payload: Buffer): RouteMessage {
  const family = payload[0] === AF.INET6 ? 6 : 4;
  const a = attrMap(payload.subarray(RTMSG));
  const dst = a.get(RTA.DST);
  const gw = a.get(RTA.GATEWAY);
  const src = a.get(RTA.PREFSRC);
  const oif = readU32(a.get(RTA.OIF));
  const metric = readU32(a.get(RTA.PRIORITY));
  const metrics = a.get(RTA.METRICS);
  const mtu = metrics ? readU32(attrMap(metrics).get(RTAX_MTU)) : undefined;
  const flags = payload.readUInt32LE(8);
  return {
    family, dstLen: payload[1]!, dst: dst ? ipString(dst) : family === 4 ? '0.0.0.0' : '::',
    table: readU32(a.get(RTA.TABLE)) ?? payload[4]!, protocol: payload[5]!, type: payload[7]!,
    ...(gw ? { gateway: ipString(gw) } : {}), ...(oif !== undefined ? { oif } : {}),
    ...(metric !== undefined ? { metric } : {}), ...(flags & RTNH_F_ONLINK ? { onLink: true } : {}),
    ...(src ? { source: ipString(src) } : {}), ...(mtu !== undefined ? { mtu } : {}),
  };
}

/** A route to add or delete; `oif` is left out for blackhole, unreachable and prohibit routes. */
export interface RouteWant {
  dst: string; dstLen: number; gateway?: string; oif?: number; metric?: number;
  table?: number; onLink?: boolean; source?: string; mtu?: number; kind?: RouteKind;
}

export const routeFamily = (r: RouteWant): 4 | 6 =>
  (isIP(r.dst) === 6 || (r.gateway && isIP(r.gateway) === 6) ? 6 : 4);

export function routeRequest(seq: number, op: 'add' | 'del', r: RouteWant): Buffer {
  const table = r.table ?? RT_TABLE_MAIN;
  const kind = r.kind ?? 'unicast';
  const m = Buffer.alloc(RTMSG);
  m[0] = routeFamily(r) === 6 ? AF.INET6 : AF.INET;
  m[1] = r.dstLen;
  // Tables above 255 only fit the attribute; the header says RT_TABLE_UNSPEC (0) then.
  m[4] = table <= 255 ? table : 0;
  m[5] = RTPROT_STATIC;
  m[6] = r.gateway || kind !== 'unicast' ? RT_SCOPE.UNIVERSE : RT_SCOPE.LINK;
  m[7] = RTN[kind];
  m.writeUInt32LE(r.onLink ? RTNH_F_ONLINK : 0, 8);
  const attrs = [
    ...(r.dstLen > 0 ? [attr.bytes(RTA.DST, ipBytes(r.dst))] : []),
    ...(r.oif !== undefined ? [attr.u32(RTA.OIF, r.oif)] : []),
    ...(r.gateway ? [attr.bytes(RTA.GATEWAY, ipBytes(r.gateway))] : []),
    ...(r.metric !== undefined ? [attr.u32(RTA.PRIORITY, r.metric)] : []),
    ...(r.source ? [attr.bytes(RTA.PREFSRC, ipBytes(r.source))] : []),
    ...(r.mtu !== undefined ? [attr.bytes(RTA.METRICS, attr.u32(RTAX_MTU, r.mtu))] : []),
    attr.u32(RTA.TABLE, table),
  ];
  const flags = op === 'add' ? NLM_F.REQUEST | NLM_F.ACK | NLM_F.CREATE | NLM_F.REPLACE : NLM_F.REQUEST | NLM_F.ACK;
  return encodeMessage(op === 'add' ? RTM.NEWROUTE : RTM.DELROUTE, flags, seq, Buffer.concat([m, ...attrs]));
}

export function getRoutesRequest(seq: number, family: 4 | 6): Buffer {
  const m = Buffer.alloc(RTMSG);
  m[0] = family === 6 ? AF.INET6 : AF.INET;
  return encodeMessage(RTM.GETROUTE, NLM_F.REQUEST | NLM_F.DUMP, seq, m);
}
