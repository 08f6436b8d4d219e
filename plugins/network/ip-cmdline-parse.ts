// ip-cmdline-parse: the kernel's (and dracut's) `ip=` syntax:
//   ip=<client>:<server>:<gw>:<netmask>:<hostname>:<device>:<autoconf>:<dns0>:<dns1>:<ntp0>
//   ip=dhcp | ip=on | ip=any | ip=<device>:dhcp
// IPv6 addresses go in brackets; netmask is dotted or a prefix length.
import { isIP } from 'node:net';

export interface IpCmdline {
  device?: string;
  dhcp: boolean;
  address?: string; // ip/prefix
  gateway?: string;
  hostname?: string;
  dns: string[];
  ntp: string[];
}

function splitFields(v: string): string[] {
  const out: string[] = [];
  let cur = '';
  let bracket = false;
  for (const c of v) {
    if (c === '[') {
      bracket = true;
      continue;
    }
    if (c === ']') {
      bracket = false;
      continue;
    }
    if (c === ':' && !bracket) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function prefixOf(mask: string, family: number, input: string): number {
  if (/^\d+$/.test(mask)) {
    const p = Number(mask);
    if (p > (family === 6 ? 128 : 32)) throw new Error(`ip=${input}: prefix length ${p} is too long`);
    return p;
  }
  if (isIP(mask) !== 4) throw new Error(`ip=${input}: netmask "${mask}" is neither dotted nor a prefix length`);
  const bits = mask.split('.').map((o) => Number(o).toString(2).padStart(8, '0')).join('');
  if (!/^1*0*$/.test(bits)) throw new Error(`ip=${input}: netmask "${mask}" is not contiguous`);
  return bits.indexOf('0') < 0 ? 32 : bits.indexOf('0');
}

export function parseIpCmdline(value: string): IpCmdline {
  const v = value.trim();
  if (['dhcp', 'on', 'any', 'dhcp6', 'auto6'].includes(v)) return { dhcp: true, dns: [], ntp: [] };
  const f = splitFields(v);
  if (f.length === 2 && ['dhcp', 'on', 'any', 'dhcp6'].includes(f[1]!)) {
    return { device: f[0] || undefined, dhcp: true, dns: [], ntp: [] } as IpCmdline;
  }
  const [
    client = '', , gw = '', mask = '', hostname = '', device = '', autoconf = '', dns0 = '', dns1 = '', ntp0 = '',
  ] = f;
  const out: IpCmdline = { dhcp: ['dhcp', 'on', 'any', 'dhcp6'].includes(autoconf), dns: [], ntp: [] };
  if (device) out.device = device;
  if (hostname) out.hostname = hostname;
  if (client) {
    const fam = isIP(client);
    if (!fam) throw new Error(`ip=${value}: client address "${client}" is not an IP address`);
    out.address = `${client}/${mask ? prefixOf(mask, fam, value) : fam === 4 ? 24 : 64}`;
  }
  if (gw) {
    if (!isIP(gw)) throw new Error(`ip=${value}: gateway "${gw}" is not an IP address`);
    out.gateway = gw;
  }
  for (const d of [dns0, dns1]) if (d) {
    if (!isIP(d)) throw new Error(`ip=${value}: DNS server "${d}" is not an IP address`);
    out.dns.push(d);
  }
  if (ntp0) {
    if (!isIP(ntp0)) throw new Error(`ip=${value}: NTP server "${ntp0}" is not an IP address`);
    out.ntp.push(ntp0);
  }
  if (!out.address && !out.dhcp) throw new Error(`ip=${value}: no client address and no dhcp`);
  return out;
}
