// nduseropt: RTM_NEWNDUSEROPT, how the kernel hands user space the router advertisement
// options it does not act on itself (RFC 8106's RDNSS and DNSSL among them). Multicast to
// RTNLGRP_ND_USEROPT; never dumped, so whoever wants them listens from before the RA arrives.
//   struct nduseroptmsg { u8 family, pad; u16 opts_len; s32 ifindex; u8 icmp_type, icmp_code; u16, u32 pad }
// then opts_len bytes of ND options (type, length in 8-octet units, body), then NDUSEROPT_* attributes.
import { ipString } from './addr.ts';
import { attrMap } from '../../../machinery/netlink/netlink.ts';
import { readDnsNames } from '../dns-name.ts';

export const RTM_NEWNDUSEROPT = 68;
const NDUSEROPTMSG = 16;
const NDUSEROPT_SRCADDR = 1;
const ND_ROUTER_ADVERT = 134;
/** ND option types (RFC 8106). */
export const ND_OPT = { RDNSS: 25, DNSSL: 31 } as const;

/** What one router advertisement said about DNS: servers and search domains, each with its lifetime (s). */
export interface RaDnsOptions {
  index: number;
  /** The router's link-local address. */
  router?: string;
  servers: { address: string; lifetime: number }[];
  domains: { name: string; lifetime: number }[];
}

/** The DNS options of an RTM_NEWNDUSEROPT payload; undefined for one that is not from a router advertisement. */
export function decodeNdUserOpt(payload: Buffer): RaDnsOptions | undefined {
  if (payload.length < NDUSEROPTMSG) return undefined;
  const optsLen = payload.readUInt16LE(2);
  const index = payload.readInt32LE(4);
  if (payload[8] !== ND_ROUTER_ADVERT || NDUSEROPTMSG + optsLen > payload.length) return undefined;
  const opts = payload.subarray(NDUSEROPTMSG, NDUSEROPTMSG + optsLen);
  const src = attrMap(payload.subarray(NDUSEROPTMSG + ((optsLen + 3) & ~3))).get(NDUSEROPT_SRCADDR);
  const out: RaDnsOptions = { index, servers: [], domains: [] };
  if (src?.length === 16) out.router = ipString(src);
  for (let off = 0; off + 8 <= opts.length;) {
    const type = opts[off]!;
    const len = opts[off + 1]! * 8;
    if (len === 0 || off + len > opts.length) break; // RFC 4861 4.6: a zero length is invalid; stop there
    const lifetime = opts.readUInt32BE(off + 4);
    if (type === ND_OPT.RDNSS) {
      for (let a = off + 8; a + 16 <= off + len; a += 16) {
        out.servers.push({ address: ipString(opts.subarray(a, a + 16)), lifetime });
      }
    } else if (type === ND_OPT.DNSSL) {
      for (const name of readDnsNames(opts.subarray(off + 8, off + len))) out.domains.push({ name, lifetime });
    }
    off += len;
  }
  return out;
}
