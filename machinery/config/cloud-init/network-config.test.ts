// network-config translated without silent loss: the cases where it used to lose things (a
// v1 subnet route written with destination + netmask, two default routes on a link, dhcp4:
// false, route attributes, "a b" search lists, match by driver), and the key accounting.
import t from 'tap';
import type { Resource } from '../../../cosi/resource/resource.ts';
import type { LinkStatusSpec } from '../../../proto/gen/spec-types.ts';
import { platformSpecs } from '../../../plugins/platform/platform-network.ts';
import { fromSeed } from '../../../plugins/platform/sources/nocloud.ts';
import { parsePyYaml } from '../safe-yaml.ts';
import { translateNetworkConfig } from './network-config.ts';

const link = (id: string, mac: string, driver?: string) => ({
  metadata: { id }, spec: { index: 2, type: 'ether', up: true, operState: 'up', mac, ...(driver ? { driver } : {}) },
}) as unknown as Resource<LinkStatusSpec>;
const LINKS = [link('eth0', '52:54:00:00:00:01', 'virtio_net'), link('eth1', '52:54:00:00:00:02', 'e1000e'),
  link('enp3s0', '52:54:00:00:00:03', 'e1000e'),
  // A bond made already: it has its first port's MAC, which a MAC match must not take for a port.
  { ...link('bond0', '52:54:00:00:00:01'), spec: { ...link('bond0', '52:54:00:00:00:01').spec, kind: 'bond' } } as
    Resource<LinkStatusSpec>];

function translate(yaml: string) {
  const y = parsePyYaml(yaml);
  if (!y.ok) throw new Error(y.message);
  const r = translateNetworkConfig(y.value);
  if (!r.ok) throw new Error(r.message);
  return r;
}
const specsOf = (yaml: string) => platformSpecs(translate(yaml).network, LINKS);

t.test('v1: a subnet route written with destination and netmask stays that network', async (t) => {
  const r = translate(`version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - type: static
        address: 192.0.2.10/24
        metric: 300
        routes:
          - {destination: 10.20.0.0, netmask: 255.255.0.0, gateway: 192.0.2.254}
          - {network: 10.30.0.0, netmask: 255.255.255.0, gateway: 192.0.2.253, metric: 5}
          - {destination: 10.40.0.0/16, gateway: 192.0.2.252}
`);
  t.same(r.network.interfaces![0]!.routes, [
    { to: '10.20.0.0/16', via: '192.0.2.254', metric: 300 }, { to: '10.30.0.0/24', via: '192.0.2.253', metric: 5 },
    { to: '10.40.0.0/16', via: '192.0.2.252', metric: 300 },
  ], 'no default route made of a network route; the subnet metric on the routes without one');
  t.same(r.network.ignored, []);
});

t.test('two default routes on one link (IPv4 and IPv6, primary and backup) are three specs', async (t) => {
  const specs = specsOf(`version: 2
ethernets:
  eth0:
    addresses: [192.0.2.10/24, "2001:db8::10/64"]
    gateway4: 192.0.2.1
    gateway6: "2001:db8::1"
    routes: [{to: default, via: 192.0.2.2, metric: 2000}]
`);
  const routes = specs.filter((s) => s.type.startsWith('RouteSpecs'));
  t.same(routes.map((s) => [s.id, s.spec.gateway, s.spec.metric]), [
    ['platform/eth0/ipv4/default', '192.0.2.1', undefined],
    ['platform/eth0/ipv6/default', '2001:db8::1', undefined],
    ['platform/eth0/ipv4/default/metric-2000', '192.0.2.2', 2000],
  ]);
});

t.test('DHCPv4 runs exactly where it is asked for', async (t) => {
  const specs = specsOf(`version: 2
ethernets:
  eth0: {dhcp4: false, addresses: [192.0.2.10/24]}
  eth1: {dhcp6: true}
  enp3s0: {dhcp4: yes}
`);
  const dhcp = specs.filter((s) => s.type.startsWith('DhcpSpecs')).map((s) => [s.spec.link, s.spec.enabled]);
  t.same(dhcp, [['eth0', false], ['eth1', false], ['enp3s0', true]],
    'dhcp4: false honoured; a DHCPv6-only and an address-less link run no DHCPv4');
});

t.test('IPv6: DHCPv6 and router advertisements as each format says (v2 dhcp6, accept-ra; v1 subnet types)',
  async (t) => {
  const v2 = specsOf(`version: 2
ethernets:
  eth0: {dhcp6: true}
  eth1: {dhcp4: true, accept-ra: false, ipv6-privacy: true}
  enp3s0: {dhcp6: false, accept-ra: true}
`);
  const dhcp = (specs: ReturnType<typeof specsOf>) => specs.filter((s) => s.type.startsWith('DhcpSpecs'))
    .map((s) => [s.spec.link, s.spec.ipv6]);
  const ra = (specs: ReturnType<typeof specsOf>) => specs.filter((s) => s.type.startsWith('LinkSpecs'))
    .map((s) => [s.spec.link, s.spec.acceptRa]);
  t.same(dhcp(v2), [['eth0', 'auto'], ['eth1', 'off'], ['enp3s0', 'off']],
    'dhcp6: true is stateful or stateless as the router says (auto); unset or false is off, as netplan renders it');
  t.same(ra(v2), [['eth1', false], ['enp3s0', true]], 'accept-ra where it is written');
  t.same(translate(`version: 2
ethernets: {eth1: {accept-ra: false, ipv6-privacy: true}}
`).network.ignored, ['network-config ethernets.eth1.ipv6-privacy: not supported: no temporary (privacy) addresses '
    + 'are made']);
  const v1 = translate(`version: 1
config:
  - {type: physical, name: eth0, subnets: [{type: dhcp6}]}
  - {type: physical, name: eth1, subnets: [{type: dhcp}, {type: ipv6_dhcpv6-stateless}]}
  - {type: physical, name: enp3s0, accept-ra: false, subnets: [{type: ipv6_dhcpv6-stateful}]}
  - {type: physical, name: eth2, subnets: [{type: ipv6_slaac}, {type: static6, address: "2001:db8::5/64"}]}
`);
  t.same(v1.network.interfaces!.map((i) => [i.id, i.dhcp4, i.dhcp6, i.acceptRa]), [
    ['eth0', false, 'stateful', undefined], ['eth1', true, 'stateless', true], ['enp3s0', false, 'stateful', false],
    ['eth2', false, 'off', true],
  ], 'each subnet type as cloud-init documents it; a link-level accept-ra stands over the subnet\'s');
  t.same(v1.network.ignored, []);
});

t.test('route attributes and routing policy reach the specs', async (t) => {
  const r = translate(`network:
  version: 2
  ethernets:
    eth0:
      addresses: [192.0.2.10/32]
      routes:
        - {to: 0.0.0.0/0, via: 198.51.100.1, on-link: true, table: 100, metric: 10, from: 192.0.2.10, mtu: 1400}
        - {to: 203.0.113.0/24, type: blackhole}
        - {to: 198.51.100.0/24, via: 192.0.2.1, scope: global, congestion-window: 10}
        - {to: 10.0.0.0/8, via: 192.0.2.1, type: nat}
        - {to: 10.1.0.0/16, via: 192.0.2.1, table: main}
      routing-policy:
        - {from: 192.0.2.0/24, table: 100, priority: 100}
        - {to: 10.9.0.0/16, table: 200, mark: 7, type-of-service: 16}
        - {from: 192.0.2.0/24}
`);
  const specs = platformSpecs(r.network, LINKS);
  const byId = (id: string) => specs.find((s) => s.id === id)?.spec;
  t.same(byId('platform/eth0/ipv4/table-100/default/metric-10'), {
    gateway: '198.51.100.1', link: 'eth0', metric: 10, table: 100, onLink: true, source: '192.0.2.10', mtu: 1400,
    layer: 'platform',
  });
  t.same(byId('platform/eth0/ipv4/203.0.113.0/24'),
    { destination: '203.0.113.0/24', link: '', type: 'blackhole', layer: 'platform' }, 'a blackhole has no link');
  t.same(specs.filter((s) => s.type.startsWith('RuleSpecs')).map((s) => s.spec), [
    { from: '192.0.2.0/24', table: 100, priority: 100, layer: 'platform' },
    { to: '10.9.0.0/16', table: 200, mark: 7, tos: 16, layer: 'platform' },
  ]);
  t.same(r.network.ignored, [
    'network-config ethernets.eth0.routes[2].congestion-window: not supported by this system',
    'network-config ethernets.eth0.routes[3]: type "nat" is not supported (unicast, blackhole, unreachable, '
      + 'prohibit): the route is left out',
    'network-config ethernets.eth0.routes[4]: table "main" is not a table number (1-4294967295, not 255): the '
      + 'route is left out',
    'network-config ethernets.eth0.routing-policy[2]: a rule needs a table number (1-4294967295, not 255): the '
      + 'rule is left out',
  ]);
});

t.test('v1 search lists as strings, match by driver and glob, unknown keys listed', async (t) => {
  const v1 = translate(`version: 1
config:
  - {type: nameserver, address: 192.0.2.53, search: "a.example b.example"}
  - {type: physical, name: eth0, subnets: [{type: static, address: 192.0.2.9/24, dns_search: "c.example d.example",
     broadcast: 192.0.2.255, control: hotplug}], frobnicate: 1}
frobnicate: 2
`);
  t.same(v1.network.nameservers, ['192.0.2.53']);
  t.same(v1.network.searchDomains, ['a.example', 'b.example', 'c.example', 'd.example']);
  t.same(v1.network.ignored, [
    'network-config config[1].subnets[0].broadcast: the broadcast address follows from the prefix',
    'network-config config[1].subnets[0].control: links are brought up at boot; hotplug and manual control are '
      + 'not supported',
    'network-config config[1].frobnicate: not supported by this system',
    'network-config frobnicate: not a key of network-config version 1',
  ]);
  const warnings: string[] = [];
  const specs = platformSpecs(translate(`version: 2
ethernets:
  intel: {match: {driver: e1000*}, dhcp4: true}
  named: {match: {name: "e?h*"}, mtu: 9000}
  again: {match: {name: "enp[0-9]s0"}, mtu: 1280}
`).network, LINKS, (m) => warnings.push(m));
  t.same(specs.filter((s) => s.type.startsWith('DhcpSpecs')).map((s) => [s.spec.link, s.spec.enabled]),
    [['eth1', true], ['enp3s0', true], ['eth0', false]],
    'match.driver picks the links of that driver (not a link named "e1000*"); a glob the names');
  t.same(specs.filter((s) => s.type.startsWith('LinkSpecs')).map((s) => s.spec.link), ['eth0']);
  t.same(warnings, ['link eth1 is matched by two interfaces of the platform\'s network config: the first one\'s '
    + 'settings apply (e1000*), not those of e?h*',
  'link enp3s0 is matched by two interfaces of the platform\'s network config: the first one\'s '
    + 'settings apply (e1000*), not those of enp[0-9]s0']);
});

t.test('a NoCloud seed with a duplicated key is used; its network warnings and ignored keys are listed', async (t) => {
  const files = new Map<string, Buffer | undefined>([
    ['meta-data', Buffer.from('instance-id: i-1\n')],
    ['network-config', Buffer.from(`version: 2
ethernets:
  eth0:
    dhcp4: true
    dhcp4: false
    wakeonlan: true
`)],
  ]);
  const f = fromSeed(files, 'seed');
  t.equal(f.kind, 'found', 'a duplicated key does not fail the source');
  if (f.kind !== 'found') return;
  t.equal(f.network?.interfaces?.[0]?.dhcp4, false, 'the last value wins, as PyYAML has it');
  t.same(f.ignored, [
    'network-config line 5: the key "dhcp4" appears again in its mapping: the last value is used, as cloud-init does',
    'network-config ethernets.eth0.wakeonlan: wake-on-LAN is not configured by this system',
  ], 'the network part\'s ignored list reaches the source (and so ConfigStatus)');
});

t.test('bonds, bridges and VLANs (v2): links to make, their ports, settings named as the kernel takes them',
  async (t) => {
    const r = translate(`version: 2
ethernets:
  nic0: {match: {macaddress: "52:54:00:00:00:01"}}
  nic1: {match: {driver: e1000e, name: eth1}}
  enp3s0: {}
bonds:
  bond0:
    interfaces: [nic0, nic1]
    parameters: {mode: active-backup, mii-monitor-interval: 100, primary: nic0, arp-interval: 5}
    dhcp4: true
bridges:
  br0: {interfaces: [enp3s0, nic0], parameters: {stp: false, forward-delay: 4, hello-time: 2}}
vlans:
  vlan42: {id: 42, link: bond0, addresses: ["2001:db8:42::10/64"], gateway6: "2001:db8:42::1"}
  vlan43: {id: 5000, link: bond0}
`);
    t.same(r.network.ignored, [
      'network-config bonds.bond0.parameters.arp-interval: not supported yet (mode, mii-monitor-interval, primary, '
        + 'lacp-rate, transmit-hash-policy, min-links, up-delay and down-delay are)',
      'network-config bridges.br0.parameters.hello-time: not supported yet (stp, forward-delay and priority are)',
      'network-config bridges.br0.interfaces[1]: nic0 is a port of bond0 already',
      'network-config vlans.vlan43: a VLAN needs an id (1-4094) and the id of a device of this config as its link: '
        + 'left out',
    ]);
    const links = platformSpecs(r.network, LINKS).filter((s) => s.type.startsWith('LinkSpecs'));
    t.same(links.map((s) => [s.id, s.spec]), [
      ['platform/eth0', { link: 'eth0', master: 'bond0', layer: 'platform' }],
      ['platform/eth1', { link: 'eth1', master: 'bond0', layer: 'platform' }],
      ['platform/enp3s0', { link: 'enp3s0', master: 'br0', layer: 'platform' }],
      ['platform/bond0', { link: 'bond0', kind: 'bond', bond: { mode: 'active-backup', miimon: 100, primary: 'eth0' },
        layer: 'platform' }],
      ['platform/br0', { link: 'br0', kind: 'bridge', bridge: { stp: false, forwardDelay: 4 }, layer: 'platform' }],
      ['platform/vlan42', { link: 'vlan42', kind: 'vlan', vlan: { id: 42, parent: 'bond0' }, layer: 'platform' }],
    ], 'ports by the links their ethernets match; the primary as a link name');
    const specs = platformSpecs(r.network, LINKS);
    t.same(specs.filter((s) => s.type.startsWith('DhcpSpecs')).map((s) => [s.spec.link, s.spec.enabled]),
      [['eth0', false], ['eth1', false], ['enp3s0', false], ['bond0', true], ['br0', false], ['vlan42', false]],
      'DHCP on the bond only');
    t.ok(specs.some((s) => s.id === 'platform/vlan42/ipv6/default' && s.spec.gateway === '2001:db8:42::1'),
      'the VLAN\'s IPv6 default route');
  });

t.test('bonds, bridges and VLANs (v1): bond- params, bridge_ params, ports named after the bond', async (t) => {
  const r = translate(`version: 1
config:
  - type: bond
    name: bond0
    bond_interfaces: [eth0, eth1]
    mac_address: "aa:bb:cc:dd:ee:ff"
    params: {bond-mode: 802.3ad, bond-miimon: 100, bond-lacp_rate: fast, bond-xmit_hash_policy: layer3+4,
             bond-ad_select: bandwidth}
    subnets: [{type: dhcp}]
  - {type: physical, name: eth0, mac_address: "52:54:00:00:00:01"}
  - {type: physical, name: eth1}
  - type: bridge
    name: br0
    bridge_interfaces: [enp3s0]
    params: {bridge_stp: "off", bridge_fd: 0, bridge_maxwait: 15}
  - {type: physical, name: enp3s0}
  - {type: vlan, name: bond0.100, vlan_link: bond0, vlan_id: 100, subnets: [{type: static, address: 10.100.0.5/24}]}
`);
  const bond = r.network.interfaces!.find((i) => i.id === 'bond0')!;
  t.same(bond.bond, { mode: '802.3ad', xmitHashPolicy: 'layer3+4', lacpRate: 'fast', miimon: 100 });
  t.equal(bond.dhcp4, true);
  t.same(r.network.interfaces!.filter((i) => i.master).map((i) => [i.id, i.master]),
    [['eth0', 'bond0'], ['eth1', 'bond0'], ['enp3s0', 'br0']], 'ports declared after their bond');
  t.same(r.network.interfaces!.find((i) => i.id === 'br0')!.bridge, { stp: false, forwardDelay: 0 });
  t.same(r.network.interfaces!.find((i) => i.id === 'bond0.100')!.vlan, { id: 100, parent: 'bond0' });
  t.same(r.network.ignored, [
    'network-config config[0].params.bond-ad_select: not supported yet (mode, miimon, primary, lacp_rate, '
      + 'xmit_hash_policy, min_links, updelay and downdelay are)',
    'network-config config[0].mac_address: the MAC address of a virtual link is the kernel\'s choice here',
    'network-config config[3].params.bridge_maxwait: not supported yet (bridge_stp, bridge_fd and bridge_bridgeprio '
      + 'are)',
  ]);
});

t.test('a bond setting outside what the kernel takes is listed, naming what it takes', async (t) => {
  const v2 = translate(`version: 2
ethernets: {eth0: {}}
bonds:
  bond0: {interfaces: [eth0], parameters: {mode: round-robin, lacp-rate: medium, transmit-hash-policy: layer9}}
`);
  t.same(v2.network.interfaces!.find((i) => i.id === 'bond0')!.bond, {});
  t.same(v2.network.ignored, [
    'network-config bonds.bond0.parameters.mode: "round-robin" is not one of balance-rr, active-backup, balance-xor, '
      + 'broadcast, 802.3ad, balance-tlb, balance-alb: not applied',
    'network-config bonds.bond0.parameters.lacp-rate: "medium" is not one of slow, fast: not applied',
    'network-config bonds.bond0.parameters.transmit-hash-policy: "layer9" is not one of layer2, layer3+4, layer2+3, '
      + 'encap2+3, encap3+4: not applied',
  ]);
  const v1 = translate(`version: 1
config:
  - {type: physical, name: eth0}
  - {type: bond, name: bond0, bond_interfaces: [eth0], params: {bond-lacp_rate: medium, xmit_hash_policy: layer9}}
`);
  t.same(v1.network.ignored, [
    'network-config config[1].params.xmit_hash_policy: "layer9" is not one of layer2, layer3+4, layer2+3, '
      + 'encap2+3, encap3+4: not applied',
    'network-config config[1].params.bond-lacp_rate: "medium" is not one of slow, fast: not applied',
  ]);
});
