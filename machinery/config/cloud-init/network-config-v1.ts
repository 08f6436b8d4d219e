// network-config-v1: cloud-init's network config version 1 -> PlatformNetworkSpec. Physical
// links (by name or MAC) with their subnets (DHCPv4 exactly where a subnet asks for it, static
// IPv4 and IPv6 with netmask or prefix, the gateway, subnet routes written with network or
// destination and netmask, the subnet's metric), name servers (a space-separated string is a
// list), global routes (put on the link whose address covers the gateway) and MTU are applied;
// every other key is listed with why (key-reader.ts).
import { isIP } from 'node:net';
import type { PlatformInterface, PlatformNetworkSpec, PlatformRoute } from '../../../proto/gen/spec-types.ts';
import { KeyReader, listOf, wordsOf, type KeyAccount } from './key-reader.ts';
import { emptyNetwork, PREFIX, prefixOf, readRoute } from './network-config-common.ts';

const NOT_YET_LINKS = 'not supported yet (this system creates no bonds, bridges or VLANs yet)';
const NOT_YET_IPV6 = 'not supported yet (IPv6 router advertisements and DHCPv6)';
const IPV6_SUBNETS = new Set(['dhcp6', 'ipv6_dhcpv6-stateful', 'ipv6_dhcpv6-stateless', 'ipv6_slaac']);

/** True when `ip` is inside the network of address/prefix (same family). */
function covers(cidr: string, ip: string): boolean {
  const [a = '', p = ''] = cidr.split('/');
  if (isIP(a) !== isIP(ip) || !isIP(ip)) return false;
  const bits = (x: string) => (isIP(x) === 4
    ? x.split('.').map((o) => Number(o).toString(2).padStart(8, '0')).join('')
    : expand6(x).map((g) => parseInt(g, 16).toString(2).padStart(16, '0')).join(''));
  const n = Number(p);
  return bits(a).slice(0, n) === bits(ip).slice(0, n);
}

function expand6(ip: string): string[] {
  const [h = '', t] = ip.split('::');
  const head = h ? h.split(':') : [];
  const tail = t ? t.split(':') : [];
  return t === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail];
}

function readSubnet(s: KeyReader, iface: PlatformInterface, n: PlatformNetworkSpec, acc: KeyAccount): void {
  const type = s.value.type;
  if (typeof type === 'string' && IPV6_SUBNETS.has(type)) {
    s.ignoreAt(s.path, `type ${type}: ${NOT_YET_IPV6}`);
    return;
  }
  s.take('type');
  if (type === 'dhcp' || type === 'dhcp4') iface.dhcp4 = true;
  else if (type === 'static' || type === 'static6') {
    const address = s.take('address');
    const netmask = s.take('netmask');
    const family = typeof address === 'string' ? isIP(address.split('/')[0]!) : 0;
    const prefix = typeof address === 'string' && address.includes('/') ? undefined
      : prefixOf(netmask) ?? (family === 6 ? 64 : 24);
    if (!family) s.ignoreAt(s.path, `a ${type} subnet without an IP address: its address is not set`);
    else iface.addresses!.push(prefix === undefined ? address as string : `${address as string}/${prefix}`);
  } else if (type !== 'manual') {
    s.ignoreAt(s.path, `type ${JSON.stringify(type)} is not a subnet type of version 1`);
    return;
  }
  const metric = s.uint('metric');
  const routes: PlatformRoute[] = [];
  const gateway = s.take('gateway');
  if (typeof gateway === 'string' && isIP(gateway)) routes.push({ via: gateway });
  else if (gateway !== undefined) s.ignoreAt(s.at('gateway'), `${JSON.stringify(gateway)} is not an IP address`);
  for (const [i, r] of listOf(s.take('routes')).entries()) {
    const reader = KeyReader.of(r, `${s.at('routes')}[${i}]`, acc, PREFIX);
    if (!reader) continue;
    const route = readRoute(reader, { to: ['network', 'destination'], via: 'gateway', netmask: 'netmask' });
    reader.done();
    if (route) routes.push(route);
  }
  // The subnet's metric is that of its routes (cloud-init renders it on each).
  iface.routes!.push(...routes.map((r) => (metric !== undefined && r.metric === undefined ? { ...r, metric } : r)));
  n.nameservers!.push(...wordsOf(s.take('dns_nameservers')));
  n.searchDomains!.push(...wordsOf(s.take('dns_search')));
  s.ignore('broadcast', 'the broadcast address follows from the prefix');
  if (s.value.control === 'auto') s.take('control');
  else s.ignore('control', 'links are brought up at boot; hotplug and manual control are not supported');
  s.done();
}

function readPhysical(item: KeyReader, n: PlatformNetworkSpec, acc: KeyAccount): PlatformInterface {
  const name = item.str('name');
  const mac = item.str('mac_address');
  const iface: PlatformInterface = {
    name: typeof name === 'string' ? name : '', mac: typeof mac === 'string' ? mac.toLowerCase() : '',
    dhcp4: false, addresses: [], routes: [],
  };
  const mtu = item.uint('mtu');
  if (mtu !== undefined) iface.mtu = mtu;
  for (const [j, s] of listOf(item.take('subnets')).entries()) {
    const reader = KeyReader.of(s, `${item.at('subnets')}[${j}]`, acc, PREFIX);
    if (reader) readSubnet(reader, iface, n, acc);
  }
  item.ignore('accept-ra', NOT_YET_IPV6);
  item.ignore('keep_configuration', 'not supported: a DHCP lease that ends removes its address');
  item.done();
  return iface;
}

/** The link a global route goes on: the one whose static address covers its gateway, else the first static one. */
function linkFor(r: PlatformRoute, interfaces: PlatformInterface[]): PlatformInterface | undefined {
  return interfaces.find((f) => r.via && (f.addresses ?? []).some((a) => covers(a, r.via)))
    ?? interfaces.find((f) => f.addresses!.length) ?? interfaces[0];
}

export function fromV1(cfg: Record<string, unknown>): { network: PlatformNetworkSpec; applied: string[] } {
  const { network, account } = emptyNetwork();
  const top = new KeyReader(cfg, '', account, PREFIX);
  top.take('version');
  const global: { route: PlatformRoute; path: string }[] = [];
  for (const [i, raw] of listOf(top.take('config')).entries()) {
    const item = KeyReader.of(raw, `config[${i}]`, account, PREFIX);
    if (!item) continue;
    const type = item.value.type;
    if (type === 'bond' || type === 'bridge' || type === 'vlan') {
      item.ignoreAt(item.path, `${type} ${String(item.value.name ?? '')}: ${NOT_YET_LINKS}`);
      continue;
    }
    item.take('type');
    if (type === 'physical') network.interfaces.push(readPhysical(item, network, account));
    else if (type === 'nameserver') {
      network.nameservers.push(...wordsOf(item.take('address')));
      network.searchDomains.push(...wordsOf(item.take('search')));
      item.ignore('interface', 'name servers are the machine\'s, used whichever link a query leaves by');
      item.done();
    } else if (type === 'route') {
      const route = readRoute(item, { to: ['destination', 'network'], via: 'gateway', netmask: 'netmask' });
      item.done();
      if (route) global.push({ route, path: item.path });
    } else {
      item.ignoreAt(item.path, `type ${JSON.stringify(type)} is not a config type of version 1`);
    }
  }
  for (const { route, path } of global) {
    const onto = linkFor(route, network.interfaces);
    if (onto) onto.routes!.push(route);
    else account.ignored.push(`${PREFIX} ${path}: a route with no link in the config to put it on`);
  }
  top.done('not a key of network-config version 1');
  return { network, applied: account.applied };
}
