// rule: RTM_*RULE messages (routing policy rules, ip-rule(8)): struct fib_rule_hdr and the
// FRA_* attributes of linux/fib_rules.h.
import { AF, ipBytes, ipString } from './addr.ts';
import { attr, attrMap, encodeMessage, NLM_F, readU32 } from '../../../machinery/netlink/netlink.ts';

export const RTM_RULE = { NEW: 32, DEL: 33, GET: 34 } as const;
const FRA = { DST: 1, SRC: 2, PRIORITY: 6, FWMARK: 10, TABLE: 15 } as const;
const FR_ACT_TO_TBL = 1;
const FIB_RULE_HDR = 12;

export interface RuleMessage {
  family: 4 | 6; from?: string; fromLen?: number; to?: string; toLen?: number;
  table: number; priority?: number; mark?: number; tos?: number; action: number;
}

/** A rule to add or delete: "packets matching this are routed by `table`". */
export interface RuleWant {
  family: 4 | 6; from?: { ip: string; prefix: number }; to?: { ip: string; prefix: number };
  table: number; priority?: number; mark?: number; tos?: number;
}

export function decodeRule(payload: Buffer): RuleMessage {
  const family = payload[0] === AF.INET6 ? 6 : 4;
  const a = attrMap(payload.subarray(FIB_RULE_HDR));
  const src = a.get(FRA.SRC);
  const dst = a.get(FRA.DST);
  const priority = readU32(a.get(FRA.PRIORITY));
  const mark = readU32(a.get(FRA.FWMARK));
  return {
    family, table: readU32(a.get(FRA.TABLE)) ?? payload[4]!, action: payload[7]!,
    ...(src ? { from: ipString(src), fromLen: payload[2]! } : {}),
    ...(dst ? { to: ipString(dst), toLen: payload[1]! } : {}),
    ...(priority !== undefined ? { priority } : {}), ...(mark !== undefined ? { mark } : {}),
    ...(payload[3] ? { tos: payload[3] } : {}),
  };
}

export function ruleRequest(seq: number, op: 'add' | 'del', r: RuleWant): Buffer {
  const h = Buffer.alloc(FIB_RULE_HDR);
  h[0] = r.family === 6 ? AF.INET6 : AF.INET;
  h[1] = r.to?.prefix ?? 0;
  h[2] = r.from?.prefix ?? 0;
  h[3] = r.tos ?? 0;
  h[4] = r.table <= 255 ? r.table : 0;
  h[7] = FR_ACT_TO_TBL;
  const attrs = [
    ...(r.from ? [attr.bytes(FRA.SRC, ipBytes(r.from.ip))] : []),
    ...(r.to ? [attr.bytes(FRA.DST, ipBytes(r.to.ip))] : []),
    ...(r.priority !== undefined ? [attr.u32(FRA.PRIORITY, r.priority)] : []),
    ...(r.mark !== undefined ? [attr.u32(FRA.FWMARK, r.mark)] : []),
    attr.u32(FRA.TABLE, r.table),
  ];
  // No NLM_F_REPLACE: the kernel would not find "the same" rule by it; EEXIST (with NLM_F_EXCL) says it is there.
  const flags = op === 'add' ? NLM_F.REQUEST | NLM_F.ACK | NLM_F.CREATE | NLM_F.EXCL : NLM_F.REQUEST | NLM_F.ACK;
  return encodeMessage(op === 'add' ? RTM_RULE.NEW : RTM_RULE.DEL, flags, seq, Buffer.concat([h, ...attrs]));
}

export function getRulesRequest(seq: number, family: 4 | 6): Buffer {
  const h = Buffer.alloc(FIB_RULE_HDR);
  h[0] = family === 6 ? AF.INET6 : AF.INET;
  return encodeMessage(RTM_RULE.GET, NLM_F.REQUEST | NLM_F.DUMP, seq, h);
}
