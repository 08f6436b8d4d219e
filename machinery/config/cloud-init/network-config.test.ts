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
  link('enp3s0', '52:54:00:00:00:03', 'e1000e')];

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
    + 'settings apply (e1000*), not those of e?h*', 'link enp3s0 is matched by two interfaces of the platform\'s network config: the first one\'s '
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
