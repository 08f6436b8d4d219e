// route: RTM_*ROUTE messages: struct rtmsg and the RTA_* attributes (main table).
import { isIP } from 'node:net';
import { AF, ipBytes, ipString } from './addr.ts';
import { RTM } from './link.ts';
import { attr, attrMap, encodeMessage, NLM_F, readU32 } from '../../../machinery/netlink/netlink.ts';

const RTA = { DST: 1, OIF: 4, GATEWAY: 5, PRIORITY: 6, TABLE: 15 } as const;
export const RT_TABLE_MAIN = 254;
const RTPROT_STATIC = 4;
const RT_SCOPE = { UNIVERSE: 0, LINK: 253 } as const;
const RTN_UNICAST = 1;
const RTMSG = 12;

export interface RouteMessage {
  family: 4 | 6; dst: string; dstLen: number; gateway?: string; oif?: number; metric?: number;
  table: number; protocol: number; type: number;
}

export function decodeRoute(payload: Buffer): RouteMessage {
  const family = payload[0] === AF.INET6 ? 6 : 4;
  const a = attrMap(payload.subarray(RTMSG));
  const dst = a.get(RTA.DST);
  const gw = a.get(RTA.GATEWAY);
  const oif = readU32(a.get(RTA.OIF));
  const metric = readU32(a.get(RTA.PRIORITY));
  return {
    family, dstLen: payload[1]!, dst: dst ? ipString(dst) : family === 4 ? '0.0.0.0' : '::',
    table: readU32(a.get(RTA.TABLE)) ?? payload[4]!, protocol: payload[5]!, type: payload[7]!,
    ...(gw ? { gateway: ipString(gw) } : {}), ...(oif !== undefined ? { oif } : {}),
    ...(metric !== undefined ? { metric } : {}),
  };
}

export interface RouteWant { dst: string; dstLen: number; gateway?: string; oif: number; metric?: number }

export function routeRequest(seq: number, op: 'add' | 'del', r: RouteWant): Buffer {
  const fam = isIP(r.dst) === 6 || (r.gateway && isIP(r.gateway) === 6) ? AF.INET6 : AF.INET;
  const m = Buffer.alloc(RTMSG);
  m[0] = fam;
  m[1] = r.dstLen;
  m[4] = RT_TABLE_MAIN;
  m[5] = RTPROT_STATIC;
  m[6] = r.gateway ? RT_SCOPE.UNIVERSE : RT_SCOPE.LINK;
  m[7] = RTN_UNICAST;
  const attrs = [
    ...(r.dstLen > 0 ? [attr.bytes(RTA.DST, ipBytes(r.dst))] : []),
    attr.u32(RTA.OIF, r.oif),
    ...(r.gateway ? [attr.bytes(RTA.GATEWAY, ipBytes(r.gateway))] : []),
    ...(r.metric !== undefined ? [attr.u32(RTA.PRIORITY, r.metric)] : []),
  ];
  const flags = op === 'add' ? NLM_F.REQUEST | NLM_F.ACK | NLM_F.CREATE | NLM_F.REPLACE : NLM_F.REQUEST | NLM_F.ACK;
  return encodeMessage(op === 'add' ? RTM.NEWROUTE : RTM.DELROUTE, flags, seq, Buffer.concat([m, ...attrs]));
}

export function getRoutesRequest(seq: number, family: 4 | 6): Buffer {
  const m = Buffer.alloc(RTMSG);
  m[0] = family === 6 ? AF.INET6 : AF.INET;
  return encodeMessage(RTM.GETROUTE, NLM_F.REQUEST | NLM_F.DUMP, seq, m);
}
