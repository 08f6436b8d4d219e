// message: DHCPv6 messages (RFC 8415): a type, a 3-byte transaction id and options, each a
// 16-bit code and length. Only what a client of one link sends and reads: IA_NA for addresses,
// DNS servers and search list (RFC 3646), NTP (RFC 5908, and SNTP's option 31), the refresh time.
import { ipBytes, ipString } from '../rtnetlink/addr.ts';
import { encodeDnsName, readDnsName, readDnsNames } from '../dns-name.ts';

export const MSG = {
  SOLICIT: 1, ADVERTISE: 2, REQUEST: 3, CONFIRM: 4, RENEW: 5, REBIND: 6, REPLY: 7, RELEASE: 8, DECLINE: 9,
  RECONFIGURE: 10, INFORMATION_REQUEST: 11,
} as const;
export const OPTION = {
  CLIENTID: 1, SERVERID: 2, IA_NA: 3, IAADDR: 5, ORO: 6, PREFERENCE: 7, ELAPSED_TIME: 8, STATUS_CODE: 13,
  RAPID_COMMIT: 14, DNS_SERVERS: 23, DOMAIN_LIST: 24, SNTP_SERVERS: 31, INFORMATION_REFRESH_TIME: 32,
  NTP_SERVER: 56,
} as const;
export const STATUS = {
  SUCCESS: 0, UNSPEC_FAIL: 1, NO_ADDRS_AVAIL: 2, NO_BINDING: 3, NOT_ON_LINK: 4, USE_MULTICAST: 5,
} as const;
const STATUS_NAMES = ['Success', 'UnspecFail', 'NoAddrsAvail', 'NoBinding', 'NotOnLink', 'UseMulticast'];
const NTP_SUBOPTION = { SRV_ADDR: 1, MC_ADDR: 2, FQDN: 3 } as const;
/** Where a client sends everything: All_DHCP_Relay_Agents_and_Servers, on the link. */
export const ALL_SERVERS = 'ff02::1:2';
export const CLIENT_PORT = 546;
export const SERVER_PORT = 547;

export type Option = [code: number, data: Buffer];

export interface Dhcp6Message { type: number; xid: number; options: Option[] }

export function encodeOptions(options: readonly Option[]): Buffer {
  return Buffer.concat(options.map(([code, data]) => {
    const head = Buffer.alloc(4);
    head.writeUInt16BE(code, 0);
    head.writeUInt16BE(data.length, 2);
    return Buffer.concat([head, data]);
  }));
}

/** The options in `b`, in order; undefined when one runs past the end (a truncated or forged message). */
export function decodeOptions(b: Buffer): Option[] | undefined {
  const out: Option[] = [];
  for (let off = 0; off < b.length;) {
    if (off + 4 > b.length) return undefined;
    const len = b.readUInt16BE(off + 2);
    if (off + 4 + len > b.length) return undefined;
    out.push([b.readUInt16BE(off), b.subarray(off + 4, off + 4 + len)]);
    off += 4 + len;
  }
  return out;
}

export function encodeDhcp6(m: Dhcp6Message): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(m.xid & 0xffffff, 0);
  head[0] = m.type;
  return Buffer.concat([head, encodeOptions(m.options)]);
}

export function decodeDhcp6(b: Buffer): Dhcp6Message | undefined {
  if (b.length < 4) return undefined;
  const options = decodeOptions(b.subarray(4));
  if (!options) return undefined;
  return { type: b[0]!, xid: b.readUInt32BE(0) & 0xffffff, options };
}

export const first = (m: { options: Option[] }, code: number) => m.options.find(([c]) => c === code)?.[1];

/** DUID-LL (RFC 8415 11.4): type 3, hardware type 1 (Ethernet), the MAC; stable for as long as the NIC is. */
export function duidLL(mac: string): Buffer {
  return Buffer.from([0, 3, 0, 1, ...mac.split(':').map((x) => parseInt(x, 16))]);
}

export const opt = {
  u16: (code: number, v: number): Option => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    return [code, b];
  },
  oro: (codes: readonly number[]): Option => {
    const b = Buffer.alloc(codes.length * 2);
    codes.forEach((c, i) => b.writeUInt16BE(c, i * 2));
    return [OPTION.ORO, b];
  },
  ips: (code: number, ips: readonly string[]): Option => [code, Buffer.concat(ips.map(ipBytes))],
  names: (code: number, names: readonly string[]): Option => [code, Buffer.concat(names.map(encodeDnsName))],
  status: (code: number, message = ''): Option => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(code);
    return [OPTION.STATUS_CODE, Buffer.concat([b, Buffer.from(message, 'utf8')])];
  },
};

export interface IaAddress { address: string; preferred: number; valid: number }
export interface IaNa { iaid: number; t1: number; t2: number; addresses: IaAddress[]; status?: Status }
export interface Status { code: number; name: string; message: string }

export function encodeIaNa(ia: Omit<IaNa, 'status'>): Option {
  const head = Buffer.alloc(12);
  head.writeUInt32BE(ia.iaid, 0);
  head.writeUInt32BE(ia.t1, 4);
  head.writeUInt32BE(ia.t2, 8);
  const addrs = ia.addresses.map((a): Option => {
    const life = Buffer.alloc(8);
    life.writeUInt32BE(a.preferred, 0);
    life.writeUInt32BE(a.valid, 4);
    return [OPTION.IAADDR, Buffer.concat([ipBytes(a.address), life])];
  });
  return [OPTION.IA_NA, Buffer.concat([head, encodeOptions(addrs)])];
}

export function decodeStatus(b: Buffer): Status {
  const code = b.length >= 2 ? b.readUInt16BE(0) : STATUS.UNSPEC_FAIL;
  return { code, name: STATUS_NAMES[code] ?? `status ${code}`, message: b.subarray(2).toString('utf8') };
}

export function decodeIaNa(b: Buffer): IaNa | undefined {
  if (b.length < 12) return undefined;
  const options = decodeOptions(b.subarray(12));
  if (!options) return undefined;
  const addresses: IaAddress[] = [];
  let status: Status | undefined;
  for (const [code, data] of options) {
    if (code === OPTION.IAADDR && data.length >= 24) {
      const own = decodeOptions(data.subarray(24));
      const st = own?.find(([c]) => c === OPTION.STATUS_CODE);
      // An address with a status other than Success is not leased (RFC 8415 21.6).
      if (st && decodeStatus(st[1]).code !== STATUS.SUCCESS) continue;
      const preferred = data.readUInt32BE(16);
      const valid = data.readUInt32BE(20);
      if (preferred > valid) continue; // RFC 8415 21.6: discarded
      addresses.push({ address: ipString(data.subarray(0, 16)), preferred, valid });
    } else if (code === OPTION.STATUS_CODE) {
      status = decodeStatus(data);
    }
  }
  return {
    iaid: b.readUInt32BE(0), t1: b.readUInt32BE(4), t2: b.readUInt32BE(8), addresses, ...(status ? { status } : {}),
  };
}

/** IPv6 addresses packed 16 bytes each (DNS servers, SNTP servers); a ragged tail is dropped. */
export function readIps(b: Buffer | undefined): string[] {
  const out: string[] = [];
  for (let off = 0; b && off + 16 <= b.length; off += 16) out.push(ipString(b.subarray(off, off + 16)));
  return out;
}

/** RFC 5908's NTP server option: sub-options with an address (unicast or multicast) or a name. */
export function readNtpServer(b: Buffer): string[] {
  const out: string[] = [];
  for (const [code, data] of decodeOptions(b) ?? []) {
    if ((code === NTP_SUBOPTION.SRV_ADDR || code === NTP_SUBOPTION.MC_ADDR) && data.length === 16) {
      out.push(ipString(data));
    } else if (code === NTP_SUBOPTION.FQDN) {
      const name = readDnsName(data, 0);
      if (name) out.push(name.name);
    }
  }
  return out;
}

/** What a server's Advertise or Reply says, read once. */
export interface ServerAnswer {
  serverId: Buffer;
  clientId?: Buffer;
  preference: number;
  /** The message's own status (absent: Success). */
  status?: Status;
  ia?: IaNa;
  dns: string[];
  domains: string[];
  ntp: string[];
  /** Information refresh time, seconds (stateless). */
  refresh?: number;
  rapidCommit: boolean;
}

/**
 * The answer in an Advertise or Reply; undefined without a server id (RFC 8415 16.3, 16.10: discard it), unless
 * `serverIdOptional`: QEMU's user network answers an Information-Request with no server id (libslirp's
 * stateless server), and a stateless client has no use for one but to show it.
 */
export function answerOf(m: Dhcp6Message, iaid?: number, serverIdOptional = false): ServerAnswer | undefined {
  const serverId = first(m, OPTION.SERVERID) ?? (serverIdOptional ? Buffer.alloc(0) : undefined);
  if (!serverId) return undefined;
  const clientId = first(m, OPTION.CLIENTID);
  const status = first(m, OPTION.STATUS_CODE);
  const pref = first(m, OPTION.PREFERENCE);
  const refresh = first(m, OPTION.INFORMATION_REFRESH_TIME);
  // RFC 8415 21.4: an IA_NA with T1 > T2 (both set) is discarded, the rest of the message read.
  const ia = m.options.filter(([c]) => c === OPTION.IA_NA).map(([, d]) => decodeIaNa(d))
    .find((x) => x && (iaid === undefined || x.iaid === iaid) && !(x.t1 && x.t2 && x.t1 > x.t2));
  const ntp = m.options.filter(([c]) => c === OPTION.NTP_SERVER).flatMap(([, d]) => readNtpServer(d));
  return {
    serverId, preference: pref?.length ? pref[0]! : 0, dns: readIps(first(m, OPTION.DNS_SERVERS)),
    domains: readDnsNames(first(m, OPTION.DOMAIN_LIST) ?? Buffer.alloc(0)),
    ntp: ntp.length ? ntp : readIps(first(m, OPTION.SNTP_SERVERS)),
    rapidCommit: first(m, OPTION.RAPID_COMMIT) !== undefined,
    ...(clientId ? { clientId } : {}), ...(status ? { status: decodeStatus(status) } : {}), ...(ia ? { ia } : {}),
    ...(refresh?.length === 4 ? { refresh: refresh.readUInt32BE(0) } : {}),
  };
}
