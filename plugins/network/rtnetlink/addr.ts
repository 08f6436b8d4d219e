// addr: RTM_*ADDR messages: struct ifaddrmsg and the IFA_* attributes.
import { isIP } from 'node:net';
import { RTM } from './link.ts';
import { attr, attrMap, encodeMessage, NLM_F } from '../../../machinery/netlink/netlink.ts';

export const AF = { INET: 2, INET6: 10 } as const;
const IFA = { ADDRESS: 1, LOCAL: 2, LABEL: 3 } as const;
const IFADDRMSG = 8;

export interface AddressMessage { family: 4 | 6; index: number; address: string; prefix: number; scope: number }

export function ipBytes(ip: string): Buffer {
  const fam = isIP(ip);
  if (fam === 4) return Buffer.from(ip.split('.').map(Number));
  if (fam !== 6) throw new Error(`not an IP address: "${ip}"`);
  const [head, tail = ''] = ip.includes('::') ? ip.split('::') : [ip, undefined as unknown as string];
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

export function ipString(b: Buffer): string {
  if (b.length === 4) return [...b].join('.');
  const groups = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16));
  // RFC 5952: the longest run of zero groups (two or more) becomes "::"
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

export function decodeAddress(payload: Buffer): AddressMessage {
  const family = payload[0] === AF.INET6 ? 6 : 4;
  const a = attrMap(payload.subarray(IFADDRMSG));
  const addr = a.get(IFA.LOCAL) ?? a.get(IFA.ADDRESS)!;
  return { family, prefix: payload[1]!, scope: payload[3]!, index: payload.readUInt32LE(4), address: ipString(addr) };
}

function ifaddrmsg(family: number, prefix: number, index: number): Buffer {
  const b = Buffer.alloc(IFADDRMSG);
  b[0] = family;
  b[1] = prefix;
  b.writeUInt32LE(index, 4);
  return b;
}

export function addressRequest(seq: number, op: 'add' | 'del', index: number, address: string, prefix: number): Buffer {
  const fam = isIP(address) === 6 ? AF.INET6 : AF.INET;
  const bytes = ipBytes(address);
  // IPv4 wants both LOCAL and ADDRESS (they differ only on point-to-point links).
  const attrs = fam === AF.INET
    ? [attr.bytes(IFA.LOCAL, bytes), attr.bytes(IFA.ADDRESS, bytes)]
    : [attr.bytes(IFA.ADDRESS, bytes)];
  const flags = op === 'add' ? NLM_F.REQUEST | NLM_F.ACK | NLM_F.CREATE | NLM_F.REPLACE : NLM_F.REQUEST | NLM_F.ACK;
  return encodeMessage(
    op === 'add' ? RTM.NEWADDR : RTM.DELADDR, flags, seq, Buffer.concat([ifaddrmsg(fam, prefix, index), ...attrs]),
  );
}

export function getAddressesRequest(seq: number): Buffer {
  return encodeMessage(RTM.GETADDR, NLM_F.REQUEST | NLM_F.DUMP, seq, ifaddrmsg(0, 0, 0));
}
