// message: DHCPv4 messages (RFC 2131) and the options we send and read (RFC 2132).
import { ipBytes, ipString } from '../rtnetlink/addr.ts';

export const DHCP = { DISCOVER: 1, OFFER: 2, REQUEST: 3, DECLINE: 4, ACK: 5, NAK: 6, RELEASE: 7 } as const;
export const OPT = {
  SUBNET_MASK: 1, ROUTER: 3, DNS: 6, HOSTNAME: 12, DOMAIN: 15, MTU: 26, NTP: 42, REQUESTED_IP: 50, LEASE_TIME: 51,
  MESSAGE_TYPE: 53, SERVER_ID: 54, PARAMS: 55, T1: 58, T2: 59, CLIENT_ID: 61, END: 255, PAD: 0,
} as const;
const COOKIE = 0x63825363;

export interface DhcpMessage {
  op: 1 | 2;
  xid: number;
  secs?: number;
  broadcast?: boolean;
  ciaddr?: string;
  yiaddr?: string;
  siaddr?: string;
  chaddr: string; // mac
  options: Map<number, Buffer>;
}

export function encodeDhcp(m: DhcpMessage): Buffer {
  const b = Buffer.alloc(240);
  b[0] = m.op;
  b[1] = 1;
  b[2] = 6;
  b.writeUInt32BE(m.xid >>> 0, 4);
  b.writeUInt16BE(m.secs ?? 0, 8);
  b.writeUInt16BE(m.broadcast ? 0x8000 : 0, 10);
  if (m.ciaddr) ipBytes(m.ciaddr).copy(b, 12);
  if (m.yiaddr) ipBytes(m.yiaddr).copy(b, 16);
  if (m.siaddr) ipBytes(m.siaddr).copy(b, 20);
  Buffer.from(m.chaddr.split(':').map((x) => parseInt(x, 16))).copy(b, 28);
  b.writeUInt32BE(COOKIE, 236);
  const opts: Buffer[] = [];
  for (const [code, v] of m.options) opts.push(Buffer.from([code, v.length]), v);
  opts.push(Buffer.from([OPT.END]));
  const out = Buffer.concat([b, ...opts]);
  return out.length < 300 ? Buffer.concat([out, Buffer.alloc(300 - out.length)]) : out; // BOOTP minimum
}

export function decodeDhcp(b: Buffer): DhcpMessage | null {
  if (b.length < 240 || b.readUInt32BE(236) !== COOKIE) return null;
  const options = new Map<number, Buffer>();
  for (let i = 240; i < b.length;) {
    const code = b[i]!;
    if (code === OPT.END) break;
    if (code === OPT.PAD) {
      i++;
      continue;
    }
    const len = b[i + 1];
    if (len === undefined || i + 2 + len > b.length) break;
    // RFC 3396: repeated options concatenate
    const v = b.subarray(i + 2, i + 2 + len);
    options.set(code, options.has(code) ? Buffer.concat([options.get(code)!, v]) : Buffer.from(v));
    i += 2 + len;
  }
  const ip = (o: number) => ipString(b.subarray(o, o + 4));
  return {
    op: b[0] === 2 ? 2 : 1, xid: b.readUInt32BE(4), secs: b.readUInt16BE(8),
    broadcast: (b.readUInt16BE(10) & 0x8000) !== 0,
    ciaddr: ip(12), yiaddr: ip(16), siaddr: ip(20),
    chaddr: [...b.subarray(28, 34)].map((x) => x.toString(16).padStart(2, '0')).join(':'), options,
  };
}

export const opt = {
  u8: (v: number) => Buffer.from([v]),
  ip: (v: string) => ipBytes(v),
  str: (v: string) => Buffer.from(v),
  bytes: (v: number[]) => Buffer.from(v),
};

const ips = (b: Buffer | undefined) => (
  b ? Array.from({ length: Math.floor(b.length / 4) }, (_, i) => ipString(b.subarray(i * 4, i * 4 + 4))) : []
);

export interface Lease {
  address: string; prefix: number; server: string; leaseSeconds: number; t1: number; t2: number;
  router?: string; dns: string[]; ntp: string[]; domain?: string; hostname?: string; mtu?: number;
}

/** The lease an ACK (or OFFER) describes; T1/T2 default to 50%/87.5% of the lease. */
export function leaseOf(m: DhcpMessage): Lease | null {
  const server = m.options.get(OPT.SERVER_ID);
  const time = m.options.get(OPT.LEASE_TIME);
  if (!m.yiaddr || m.yiaddr === '0.0.0.0' || !server || !time) return null;
  const mask = m.options.get(OPT.SUBNET_MASK);
  const prefix = mask
    ? [...mask].reduce((n, byte) => n + byte.toString(2).split('').filter((c) => c === '1').length, 0)
    : 24;
  const leaseSeconds = time.readUInt32BE(0);
  const t1 = m.options.get(OPT.T1)?.readUInt32BE(0) ?? Math.floor(leaseSeconds / 2);
  const t2 = m.options.get(OPT.T2)?.readUInt32BE(0) ?? Math.floor(leaseSeconds * 7 / 8);
  const router = ips(m.options.get(OPT.ROUTER))[0];
  const mtu = m.options.get(OPT.MTU)?.readUInt16BE(0);
  const domain = m.options.get(OPT.DOMAIN)?.toString().replace(/\0.*$/, '');
  const hostname = m.options.get(OPT.HOSTNAME)?.toString().replace(/\0.*$/, '');
  return {
    address: m.yiaddr, prefix, server: ipString(server), leaseSeconds, t1, t2,
    dns: ips(m.options.get(OPT.DNS)), ntp: ips(m.options.get(OPT.NTP)),
    ...(router ? { router } : {}), ...(mtu ? { mtu } : {}), ...(domain ? { domain } : {}),
    ...(hostname ? { hostname } : {}),
  };
}

export function messageType(m: DhcpMessage): number | undefined {
  return m.options.get(OPT.MESSAGE_TYPE)?.[0];
}
