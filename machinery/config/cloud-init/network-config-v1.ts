// network-config-v1: cloud-init's network config version 1 -> PlatformNetworkSpec. Physical
// links (by name or MAC), bonds, bridges and VLANs (with the parameters the kernel takes),
// each with their subnets (DHCPv4 and DHCPv6 exactly where a subnet asks for it, SLAAC, static
// IPv4 and IPv6 with netmask or prefix, the gateway, subnet routes written with network or
// destination and netmask, the subnet's metric), name servers (a space-separated string is a
// list), global routes (put on the link whose address covers the gateway) and MTU are applied;
// every other key is listed with why (key-reader.ts).
import { isIP } from 'node:net';
import type {
  BondSettings, BridgeSettings, PlatformInterface, PlatformNetworkSpec, PlatformRoute,
} from '../../../proto/gen/spec-types.ts';
import { BOND_MODES, LACP_RATES, XMIT_HASH_POLICIES } from '../../model/link-kinds.ts';
import { boolOf } from './key-reader.ts';
import { KeyReader, listOf, wordsOf, type KeyAccount } from './key-reader.ts';
import { emptyNetwork, PREFIX, prefixOf, readRoute } from './network-config-common.ts';
import { inSubnet } from '../../sys/ip-subnet.ts';

/** IPv6 subnet types as cloud-init's documentation describes them: DHCPv6's mode, and whether SLAAC is asked. */
const IPV6_SUBNETS: Record<string, Pick<PlatformInterface, 'dhcp6' | 'acceptRa'>> = {
  dhcp6: { dhcp6: 'stateful' },
  'ipv6_dhcpv6-stateful': { dhcp6: 'stateful', acceptRa: true },
  'ipv6_dhcpv6-stateless': { dhcp6: 'stateless', acceptRa: true },
  ipv6_slaac: { acceptRa: true },
};

function readSubnet(s: KeyReader, iface: PlatformInterface, n: PlatformNetworkSpec, acc: KeyAccount): void {
  const type = s.take('type');
  const ipv6 = typeof type === 'string' ? IPV6_SUBNETS[type] : undefined;
  if (ipv6) Object.assign(iface, ipv6);
  else if (type === 'dhcp' || type === 'dhcp4') iface.dhcp4 = true;
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

/** What physical, bond, bridge and vlan items share: MTU, subnets; `iface` has the rest already. */
function readLink(
  item: KeyReader, iface: PlatformInterface, n: PlatformNetworkSpec, acc: KeyAccount,
): PlatformInterface {
  iface.addresses = [];
  iface.routes = [];
  const mtu = item.uint('mtu');
  if (mtu !== undefined) iface.mtu = mtu;
  for (const [j, s] of listOf(item.take('subnets')).entries()) {
    const reader = KeyReader.of(s, `${item.at('subnets')}[${j}]`, acc, PREFIX);
    if (reader) readSubnet(reader, iface, n, acc);
  }
  const acceptRa = item.bool('accept-ra');
  if (acceptRa !== undefined) iface.acceptRa = acceptRa;
  // No dhcp6 subnet: no DHCPv6, as cloud-init renders it.
  iface.dhcp6 ??= 'off';
  item.ignore('keep_configuration', 'not supported: a DHCP lease that ends removes its address');
  if (iface.kind) item.ignore('mac_address', 'the MAC address of a virtual link is the kernel\'s choice here');
  item.done();
  return iface;
}

/** A bond's params, written as the kernel names them, with or without "bond-" (bond-mode, miimon, ...). */
function readBondParams(p: KeyReader): BondSettings {
  const get = <T>(name: string, read: (k: string) => T | undefined): T | undefined => {
    const dashed = name.replace(/_/g, '-');
    const key = [`bond-${name}`, name, `bond-${dashed}`, dashed].find((k) => p.has(k));
    return key === undefined ? undefined : read(key);
  };
  const mode = get('mode', (k) => p.choice(k, BOND_MODES));
  const hash = get('xmit_hash_policy', (k) => p.choice(k, XMIT_HASH_POLICIES));
  const lacp = get('lacp_rate', (k) => p.choice(k, LACP_RATES));
  const out: BondSettings = {
    ...(mode ? { mode } : {}), ...(hash ? { xmitHashPolicy: hash } : {}), ...(lacp ? { lacpRate: lacp } : {}),
  };
  for (const [field, name] of [['miimon', 'miimon'], ['minLinks', 'min_links'], ['updelay', 'updelay'],
    ['downdelay', 'downdelay']] as const) {
    const v = get(name, (k) => p.uint(k));
    if (v !== undefined) out[field] = v;
  }
  const primary = get('primary', (k) => p.str(k));
  if (primary) out.primary = primary;
  p.done('not supported yet (mode, miimon, primary, lacp_rate, xmit_hash_policy, min_links, updelay and '
    + 'downdelay are)');
  return out;
}

function readBridgeParams(p: KeyReader): BridgeSettings {
  const stp = p.typed('bridge_stp', boolOf, 'on or off');
  const fd = p.uint('bridge_fd');
  const prio = p.uint('bridge_bridgeprio');
  p.ignore('bridge_ports', 'the ports are bridge_interfaces');
  p.done('not supported yet (bridge_stp, bridge_fd and bridge_bridgeprio are)');
  return {
    ...(stp !== undefined ? { stp } : {}), ...(fd !== undefined ? { forwardDelay: fd } : {}),
    ...(prio !== undefined ? { priority: prio } : {}),
  };
}

/** The link a global route goes on: the one whose static address covers its gateway, else the first static one. */
function linkFor(r: PlatformRoute, interfaces: PlatformInterface[]): PlatformInterface | undefined {
  const covers = (cidr: string) => inSubnet(r.via, cidr.split('/')[0]!, Number(cidr.split('/')[1]));
  return interfaces.find((f) => r.via && (f.addresses ?? []).some(covers))
    ?? interfaces.find((f) => f.addresses!.length) ?? interfaces[0];
}

export function fromV1(cfg: Record<string, unknown>): { network: PlatformNetworkSpec; applied: string[] } {
  const { network, account } = emptyNetwork();
  const top = new KeyReader(cfg, '', account, PREFIX);
  top.take('version');
  const global: { route: PlatformRoute; path: string }[] = [];
  const ports: { master: string; ports: unknown[]; path: string }[] = [];
  for (const [i, raw] of listOf(top.take('config')).entries()) {
    const item = KeyReader.of(raw, `config[${i}]`, account, PREFIX);
    if (!item) continue;
    const type = item.value.type;
    item.take('type');
    const name = item.str('name') ?? '';
    if (type === 'physical') {
      const mac = item.str('mac_address');
      network.interfaces.push(readLink(item, { id: name, name, mac: mac ? mac.toLowerCase() : '', dhcp4: false },
        network, account));
    } else if (type === 'bond' || type === 'bridge') {
      const params = item.map('params');
      const settings = type === 'bond' ? { bond: params ? readBondParams(params) : {} }
        : { bridge: params ? readBridgeParams(params) : {} };
      const key = type === 'bond' ? 'bond_interfaces' : 'bridge_interfaces';
      ports.push({ master: name, ports: listOf(item.take(key)), path: item.at(key) });
      network.interfaces.push(readLink(item, { id: name, name, mac: '', kind: type, ...settings, dhcp4: false },
        network, account));
    } else if (type === 'vlan') {
      const vid = item.uint('vlan_id');
      const link = item.str('vlan_link');
      if (vid === undefined || vid < 1 || vid > 4094 || !link) {
        item.ignoreAt(item.path, 'a VLAN needs vlan_id (1-4094) and vlan_link: left out');
        continue;
      }
      const vlan = { id: vid, parent: link };
      network.interfaces.push(readLink(item, { id: name, name, mac: '', kind: 'vlan', vlan, dhcp4: false },
        network, account));
    } else if (type === 'nameserver') {
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
  // Ports are named by their items' names, which may come after the bond or bridge.
  for (const { master, ports: names, path } of ports) {
    for (const [i, port] of names.entries()) {
      const member = network.interfaces.find((f) => f.id === port && !f.kind);
      if (typeof port !== 'string' || !member || member.master) {
        account.ignored.push(`${PREFIX} ${path}[${i}]: ${JSON.stringify(port)} is not a physical item of this config `
          + 'that is not a port already');
      } else member.master = master;
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
