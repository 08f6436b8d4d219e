// network-config-v2: cloud-init's network config version 2, which is netplan's format, ->
// PlatformNetworkSpec. Ethernets (matched by name glob, MAC and driver), bonds, bridges and
// VLANs (their interfaces and the parameters the kernel takes), DHCPv4 and DHCPv6 exactly as
// asked (dhcp6: as the router advertisements say, stateful or stateless), accept-ra, static
// addresses (IPv4 and IPv6), gateway4/gateway6, routes with every attribute the kernel
// takes (metric, table, on-link, from, mtu, type), routing-policy, name servers and MTU are
// applied; every other key is listed with why (key-reader.ts).
import { isIP } from 'node:net';
import type {
  BondSettings, BridgeSettings, PlatformInterface, PlatformNetworkSpec, PlatformRoute,
} from '../../../proto/gen/spec-types.ts';
import { BOND_MODES, LACP_RATES, XMIT_HASH_POLICIES } from '../../model/link-kinds.ts';
import { KeyReader, listOf, wordsOf, type KeyAccount } from './key-reader.ts';
import { emptyNetwork, PREFIX, readRoute, readRule } from './network-config-common.ts';

const EUI64 = 'not supported: SLAAC addresses are the kernel\'s EUI-64 ones';
const SECTIONS: Record<string, string> = {
  wifis: 'this system has no Wi-Fi', modems: 'this system has no modems',
  tunnels: 'this system creates no tunnels', vrfs: 'this system creates no VRFs',
  'dummy-devices': 'this system creates no dummy links', 'virtual-ethernets': 'this system creates no veth pairs',
  'nm-devices': 'NetworkManager passthrough has no meaning here', openvswitch: 'this system has no Open vSwitch',
};

/** Keys of an ethernet this system leaves alone, with why (the rest not taken are "not supported"). */
const ETHERNET_WHY: Record<string, string> = {
  'set-name': 'links are not renamed (match the name they have)',
  wakeonlan: 'wake-on-LAN is not configured by this system',
  macaddress: 'MAC addresses are not changed by this system',
  'ipv6-privacy': 'not supported: no temporary (privacy) addresses are made', 'ipv6-address-generation': EUI64,
  'ipv6-address-token': EUI64, 'ipv6-mtu': 'not supported: IPv6 takes the link\'s MTU (or the RA\'s)',
  'ra-overrides': 'not supported: a router advertisement\'s default route, DNS servers and domains are all taken',
  'link-local': 'link-local addresses are the kernel\'s (IPv6 on, IPv4 off)',
  renderer: 'this system renders the network itself',
  critical: 'not supported: a DHCP lease that ends removes its address',
  'dhcp-identifier': 'the DHCP client identifies itself by MAC',
};

/** An ethernet's match: a name (or glob), a MAC and a driver, all that are given; none is its id as a name. */
function readMatch(id: string, e: KeyReader): Pick<PlatformInterface, 'name' | 'mac' | 'driver'> {
  const match = e.map('match');
  const name = match?.str('name');
  const mac = match?.str('macaddress');
  const driver = match?.str('driver');
  match?.done();
  return {
    name: typeof name === 'string' ? name : match ? '' : id, mac: typeof mac === 'string' ? mac.toLowerCase() : '',
    ...(typeof driver === 'string' ? { driver } : {}),
  };
}

/** What every device type has (addresses, DHCP, routes, name servers, MTU, ...), read into `iface`. */
function readDevice(
  e: KeyReader, iface: PlatformInterface, n: PlatformNetworkSpec, acc: KeyAccount,
): PlatformInterface {
  iface.dhcp4 = e.bool('dhcp4') === true;
  iface.addresses = [];
  iface.routes = [];
  // netplan's dhcp6 covers stateful and stateless DHCPv6: which one is the router advertisement's to say.
  iface.dhcp6 = e.bool('dhcp6') === true ? 'auto' : 'off';
  const acceptRa = e.bool('accept-ra');
  if (acceptRa !== undefined) iface.acceptRa = acceptRa;
  for (const key of ['dhcp4-overrides', 'dhcp6-overrides']) e.ignore(key, 'not supported yet (the DHCP client takes '
    + 'routes, DNS, NTP and the host name from every lease)');
  for (const [i, a] of listOf(e.take('addresses')).entries()) {
    // netplan: "10.0.0.1/24" or {"10.0.0.1/24": {lifetime, label}}
    const text = typeof a === 'string' ? a : a && typeof a === 'object' ? Object.keys(a)[0] : undefined;
    if (!text || !/\//.test(text) || !isIP(text.split('/')[0]!)) {
      e.ignoreAt(`${e.at('addresses')}[${i}]`, `${JSON.stringify(a)} is not an address with a prefix (IP/prefix)`);
      continue;
    }
    if (typeof a !== 'string') e.ignoreAt(`${e.at('addresses')}[${i}].${text}`, 'lifetime and label are not set');
    iface.addresses!.push(text);
  }
  for (const key of ['gateway4', 'gateway6']) {
    const gw = e.take(key);
    if (gw === undefined) continue;
    if (typeof gw === 'string' && isIP(gw) === (key === 'gateway4' ? 4 : 6)) iface.routes!.push({ via: gw });
    else e.ignoreAt(e.at(key), `${JSON.stringify(gw)} is not an IPv${key === 'gateway4' ? 4 : 6} address`);
  }
  for (const [i, r] of listOf(e.take('routes')).entries()) {
    const reader = KeyReader.of(r, `${e.at('routes')}[${i}]`, acc, PREFIX);
    if (!reader) continue;
    const route = readRoute(reader, { to: ['to'], via: 'via', from: 'from', onLink: 'on-link', type: 'type' });
    const scope = reader.value.scope;
    if (route && scope !== undefined && scope !== scopeOf(route)) {
      reader.ignore('scope', `the kernel's scope follows from the route (${scopeOf(route)} here)`);
    } else reader.take('scope');
    reader.done();
    if (route) iface.routes!.push(route);
  }
  for (const [i, r] of listOf(e.take('routing-policy')).entries()) {
    const reader = KeyReader.of(r, `${e.at('routing-policy')}[${i}]`, acc, PREFIX);
    if (!reader) continue;
    const rule = readRule(reader);
    reader.done();
    if (rule) n.rules!.push(rule);
  }
  const ns = e.map('nameservers');
  n.nameservers!.push(...wordsOf(ns?.take('addresses')));
  n.searchDomains!.push(...wordsOf(ns?.take('search')));
  ns?.done();
  const mtu = e.uint('mtu');
  if (mtu !== undefined) iface.mtu = mtu;
  e.bool('optional'); // this system never waits for a link at boot: optional or not, it does not block
  for (const [key, why] of Object.entries(ETHERNET_WHY)) e.ignore(key, why);
  e.done();
  return iface;
}

/** netplan's names of the bonding parameters the kernel takes here (times in ms). */
function readBond(p: KeyReader): BondSettings {
  const out: BondSettings = {
    ...optional('mode', p.choice('mode', BOND_MODES)),
    ...optional('miimon', p.uint('mii-monitor-interval')), ...optional('primary', p.str('primary')),
    ...optional('lacpRate', p.choice('lacp-rate', LACP_RATES)),
    ...optional('xmitHashPolicy', p.choice('transmit-hash-policy', XMIT_HASH_POLICIES)),
    ...optional('minLinks', p.uint('min-links')), ...optional('updelay', p.uint('up-delay')),
    ...optional('downdelay', p.uint('down-delay')),
  };
  p.done('not supported yet (mode, mii-monitor-interval, primary, lacp-rate, transmit-hash-policy, min-links, '
    + 'up-delay and down-delay are)');
  return out;
}

function readBridge(p: KeyReader): BridgeSettings {
  const out: BridgeSettings = {
    ...optional('stp', p.bool('stp')), ...optional('forwardDelay', p.uint('forward-delay')),
    ...optional('priority', p.uint('priority')),
  };
  p.done('not supported yet (stp, forward-delay and priority are)');
  return out;
}

const optional = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : { [k]: v } as Record<K, V>);

/** A bond's or bridge's `interfaces`: each (an ethernet's id) becomes a port of it. */
function claimPorts(e: KeyReader, master: string, n: PlatformNetworkSpec): void {
  for (const [i, port] of listOf(e.take('interfaces')).entries()) {
    const member = n.interfaces!.find((f) => f.id === port);
    if (typeof port !== 'string' || !member) {
      e.ignoreAt(`${e.at('interfaces')}[${i}]`, `${JSON.stringify(port)} is not the id of an ethernet of this config`);
    } else if (member.master) {
      e.ignoreAt(`${e.at('interfaces')}[${i}]`, `${port} is a port of ${member.master} already`);
    } else member.master = master;
  }
}

const scopeOf = (r: PlatformRoute) => (r.type ? 'global' : r.via ? 'global' : 'link');

export function fromV2(cfg: Record<string, unknown>): { network: PlatformNetworkSpec; applied: string[] } {
  const { network, account: acc } = emptyNetwork();
  const top = new KeyReader(cfg, '', acc, PREFIX);
  top.take('version');
  top.ignore('renderer', ETHERNET_WHY.renderer!);
  const ethernets = top.map('ethernets');
  for (const id of Object.keys(ethernets?.value ?? {})) {
    const e = ethernets!.map(id);
    if (e) network.interfaces.push(readDevice(e, { id, ...readMatch(id, e), dhcp4: false }, network, acc));
  }
  // Bonds and bridges are named by their id; their ports are ethernets, which must come first.
  for (const [section, kind] of [['bonds', 'bond'], ['bridges', 'bridge']] as const) {
    const devices = top.map(section);
    for (const id of Object.keys(devices?.value ?? {})) {
      const e = devices!.map(id);
      if (!e) continue;
      const params = e.map('parameters');
      const settings = kind === 'bond' ? { bond: params ? readBond(params) : {} }
        : { bridge: params ? readBridge(params) : {} };
      claimPorts(e, id, network);
      network.interfaces.push(readDevice(e, { id, name: id, mac: '', kind, ...settings, dhcp4: false }, network, acc));
    }
  }
  const vlans = top.map('vlans');
  for (const id of Object.keys(vlans?.value ?? {})) {
    const e = vlans!.map(id);
    if (!e) continue;
    const vid = e.uint('id');
    const link = e.str('link');
    if (vid === undefined || vid < 1 || vid > 4094 || !link || !network.interfaces.some((f) => f.id === link)) {
      e.ignoreAt(e.path, `a VLAN needs an id (1-4094) and the id of a device of this config as its link: left out`);
      continue;
    }
    network.interfaces.push(readDevice(e, { id, name: id, mac: '', kind: 'vlan', vlan: { id: vid, parent: link },
      dhcp4: false }, network, acc));
  }
  for (const [section, why] of Object.entries(SECTIONS)) top.ignoreEach(section, why);
  top.done('not a key of network-config version 2');
  return { network, applied: acc.applied };
}
