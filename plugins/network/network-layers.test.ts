// The network plugin's layers, merges and spec controllers without root: the same
// controllers as in PID 1, on the controller harness, against the in-memory kernel
// (rtnetlink/memory-kernel.ts). What DHCP would declare is declared here by hand at
// the dhcp layer; the real client is tested against dnsmasq (dhcp/dhcp.test.ts).
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { SOURCES_ANNOTATION } from '../sdk/merge-controller.ts';
import { addressMergeController } from './address-merge.ts';
import { addressSpecController } from './address-spec.ts';
import { cmdlineConfigController } from './cmdline-config.ts';
import { dhcpConfigController } from './dhcp-config.ts';
import { dhcpMergeController } from './dhcp-merge.ts';
import { hostnameMergeController } from './hostname-merge.ts';
import { hostnameSpecController, type HostnameKernel } from './hostname-spec.ts';
import { linkConfigController } from './link-config.ts';
import { linkMergeController } from './link-merge.ts';
import { linkSpecController } from './link-spec.ts';
import { linkStatusController } from './link-status.ts';
import { resolverMergeController } from './resolver-merge.ts';
import { resolverSpecController } from './resolver-spec.ts';
import { routeMergeController } from './route-merge.ts';
import { routeSpecController } from './route-spec.ts';
import { MemoryKernel } from './rtnetlink/memory-kernel.ts';
import {
  ADDRESS_SPEC_TYPE, ADDRESS_SPEC_STATUS_TYPE, DHCP_SPEC_TYPE, HOSTNAME_SPEC_TYPE, HOSTNAME_SPEC_STATUS_TYPE,
  KERNEL_CMDLINE_TYPE, LINK_SPEC_STATUS_TYPE, LINK_SPEC_TYPE, MERGED_ADDRESS_SPEC_TYPE, MERGED_DHCP_SPEC_TYPE,
  MERGED_LINK_SPEC_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, ROUTE_SPEC_STATUS_TYPE, RUNTIME_NS,
} from '../../proto/gen/resource-types.ts';

const net = (type: string, id: string) => ({ namespace: NETWORK_NS, type, id });
const codecs = builtinCodecs(builtinTypes());

async function machine(t: Test, cmdline?: string) {
  const kernel = new MemoryKernel();
  kernel.addLink({ name: 'eth0' });
  const rtnl = () => kernel;
  const names = { hostname: '(none)', domainname: '(none)' };
  const uts: HostnameKernel = {
    names: () => ({ ...names }), set: (hostname, domainname) => { Object.assign(names, { hostname, domainname }); },
  };
  const etc = mkdtempSync(join(tmpdir(), 'net-etc-'));
  const h = await controllerHarness(t, [
    linkStatusController(rtnl), linkConfigController({ machineLinks: true }), dhcpConfigController(),
    cmdlineConfigController(),
    linkMergeController(), addressMergeController(), routeMergeController(), dhcpMergeController(),
    hostnameMergeController(), resolverMergeController(),
    linkSpecController(rtnl), addressSpecController(rtnl), routeSpecController(rtnl),
    hostnameSpecController(uts), resolverSpecController(etc),
  ], {
    codecs,
    seed: cmdline ? [newResource({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }, {
      raw: cmdline, params: { ip: cmdline.slice(3) },
    })] : [],
  });
  const spec = (type: string, id: string) => h.spec<Record<string, unknown>>(net(type, id));
  const addrs = () => kernel.addresses().map((a) => `${a.address}/${a.prefix}`).sort();
  return { kernel, h, spec, addrs, names, etc };
}

t.test('defaults: loopback and physical links up, DHCP on for physical links only', async (t) => {
  const { kernel, h, spec } = await machine(t);
  kernel.addLink({ name: 'veth0', kind: 'veth' });
  t.equal(await h.until(() => kernel.byName('lo').up && kernel.byName('eth0').up, true), true,
    'lo and eth0 brought up');
  t.same(await h.until(() => h.ids({ namespace: NETWORK_NS, type: MERGED_DHCP_SPEC_TYPE }), ['eth0']), ['eth0'],
    'DHCP for eth0 only');
  t.match(await spec(MERGED_DHCP_SPEC_TYPE, 'eth0'), { enabled: true, layer: 'default' });
  t.equal(kernel.byName('veth0').up, false, 'a virtual link is left alone');
  t.notOk(kernel.changes.includes('up veth0'));
});

t.test('adding an address never removes another, and never turns DHCP off', async (t) => {
  const { h, spec, addrs } = await machine(t);
  // What the DHCP client declares for its lease.
  await h.create(net(ADDRESS_SPEC_TYPE, 'dhcp/eth0'), { address: '10.0.2.15/24', link: 'eth0', layer: 'dhcp' });
  await h.create(net(ROUTE_SPEC_TYPE, 'dhcp/default/eth0'), { gateway: '10.0.2.2', link: 'eth0', layer: 'dhcp' });
  t.equal(await h.until(async () => (await spec(ROUTE_SPEC_STATUS_TYPE, '0.0.0.0/0/1024'))?.state, 'applied'),
    'applied');
  await h.create(net(ADDRESS_SPEC_TYPE, 'extra'), { address: '10.0.2.99/24', link: 'eth0' });
  t.same(await h.until(addrs, ['10.0.2.15/24', '10.0.2.99/24']), ['10.0.2.15/24', '10.0.2.99/24'],
    'both addresses on eth0');
  t.match(await spec(MERGED_DHCP_SPEC_TYPE, 'eth0'), { enabled: true }, 'DHCP still on');
  t.match(await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/10.0.2.99/24'), { state: 'applied', layer: 'config' },
    'a spec without a layer is config');
  await h.remove(net(ADDRESS_SPEC_TYPE, 'extra'));
  t.same(addrs(), ['10.0.2.15/24'], 'deleting it restores exactly what was there');
  t.equal((await spec(ROUTE_SPEC_STATUS_TYPE, '0.0.0.0/0/1024'))?.state, 'applied', 'the default route stayed');
});

t.test('the same address from two layers is one address; the highest layer shows, the other keeps it', async (t) => {
  const { h, spec, addrs } = await machine(t);
  await h.create(net(ADDRESS_SPEC_TYPE, 'dhcp/eth0'), { address: '10.0.2.15/24', link: 'eth0', layer: 'dhcp' });
  await h.create(net(ADDRESS_SPEC_TYPE, 'mine'), { address: '10.0.2.15/24', link: 'eth0' });
  const merged = await h.until(async () => (await h.state.get(net(MERGED_ADDRESS_SPEC_TYPE, 'eth0/10.0.2.15/24')))
    .metadata.annotations[SOURCES_ANNOTATION], 'config:mine,dhcp:dhcp/eth0');
  t.equal(merged, 'config:mine,dhcp:dhcp/eth0', 'both sources, winner first');
  t.equal(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/10.0.2.15/24'))?.layer, 'config'),
    'config');
  await h.remove(net(ADDRESS_SPEC_TYPE, 'mine'));
  t.same(addrs(), ['10.0.2.15/24'], 'the address stays: DHCP still declares it');
  t.equal(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/10.0.2.15/24'))?.layer, 'dhcp'),
    'dhcp');
});

t.test('a config default route replaces DHCP\'s at the same metric; deleting it brings DHCP\'s back', async (t) => {
  const { kernel, h, spec } = await machine(t);
  await h.create(net(ADDRESS_SPEC_TYPE, 'dhcp/eth0'), { address: '10.0.2.15/24', link: 'eth0', layer: 'dhcp' });
  await h.create(net(ROUTE_SPEC_TYPE, 'dhcp/default/eth0'), { gateway: '10.0.2.2', link: 'eth0', layer: 'dhcp' });
  const gw = () => kernel.routes(4).filter((r) => r.dstLen === 0).map((r) => r.gateway);
  t.same(await h.until(gw, ['10.0.2.2']), ['10.0.2.2']);
  await h.create(net(ROUTE_SPEC_TYPE, 'mine'), { gateway: '10.0.2.3', link: 'eth0' });
  t.same(await h.until(gw, ['10.0.2.3']), ['10.0.2.3'], 'the config layer wins');
  t.match(await spec(ROUTE_SPEC_STATUS_TYPE, '0.0.0.0/0/1024'),
    { state: 'applied', gateway: '10.0.2.3', layer: 'config' });
  await h.remove(net(ROUTE_SPEC_TYPE, 'mine'));
  t.same(await h.until(gw, ['10.0.2.2']), ['10.0.2.2'], 'DHCP\'s route is back');
});

t.test('a VLAN a layer declares is made and brought up (its settings are never sent again)', async (t) => {
  const { kernel, h, spec } = await machine(t);
  kernel.kinds.add('vlan');
  await h.until(() => kernel.byName('eth0').up, true);
  await h.create(net(LINK_SPEC_TYPE, 'platform/vlan7'),
    { link: 'vlan7', kind: 'vlan', vlan: { id: 7, parent: 'eth0' }, layer: 'platform' });
  t.equal(await h.until(() => kernel.links().find((l) => l.name === 'vlan7')?.up, true), true,
    'up, from the default layer (an empty IFLA_INFO_DATA with it was EINVAL)');
  t.match(await spec(LINK_SPEC_STATUS_TYPE, 'vlan7'), { state: 'applied', created: 'vlan' });
  t.equal(kernel.changes.filter((c) => c === 'create vlan vlan7').length, 1, 'made once');
});

t.test('LinkSpecs merge field by field; the MTU goes back when no layer sets one', async (t) => {
  const { kernel, h, spec } = await machine(t);
  await h.until(() => kernel.byName('eth0').up, true);
  await h.create(net(LINK_SPEC_TYPE, 'eth0'), { mtu: 1400 });
  t.match(await h.until(async () => (await spec(MERGED_LINK_SPEC_TYPE, 'eth0'))?.mtu, 1400)
    && await spec(MERGED_LINK_SPEC_TYPE, 'eth0'),
    { up: true, mtu: 1400, layer: 'config', link: 'eth0' }, 'up from the default layer, MTU from config');
  t.equal(await h.until(() => kernel.byName('eth0').mtu, 1400), 1400);
  await h.remove(net(LINK_SPEC_TYPE, 'eth0'));
  t.equal(await h.until(() => kernel.byName('eth0').mtu, 1500), 1500, 'the original MTU is back');
  t.equal(kernel.byName('eth0').up, true, 'and the link stays up');
});

t.test('only link-spec changes a link: addresses and DHCP write LinkSpecs at their layer instead', async (t) => {
  const { kernel, h } = await machine(t);
  kernel.addLink({ name: 'dummy0', kind: 'dummy' });
  await h.create(net(LINK_SPEC_TYPE, 'dummy0'), { up: false });
  await h.create(net(ADDRESS_SPEC_TYPE, 'd'), { address: '198.51.100.1/24', link: 'dummy0' });
  t.ok(await h.until(() => kernel.addresses().some((a) => a.address === '198.51.100.1'), true), 'address applied');
  t.notOk(kernel.changes.includes('up dummy0'), 'held down by config over the default layer');
  await h.remove(net(LINK_SPEC_TYPE, 'dummy0'));
  t.equal(await h.until(() => kernel.byName('dummy0').up, true), true,
    'without the hold, the address\'s default LinkSpec brings it up');
});

t.test('ip= with a static address and autoconf off turns DHCP off for its device only', async (t) => {
  const { h, spec, addrs } = await machine(t, 'ip=10.0.2.15::10.0.2.2:255.255.255.0::eth0:off');
  t.match(await h.until(async () => (await spec(MERGED_DHCP_SPEC_TYPE, 'eth0'))?.enabled, false) === false
    && await spec(MERGED_DHCP_SPEC_TYPE, 'eth0'),
    { enabled: false, layer: 'cmdline' });
  t.same(await h.until(addrs, ['10.0.2.15/24']), ['10.0.2.15/24']);
  await h.create(net(DHCP_SPEC_TYPE, 'eth0'), { enabled: true });
  t.equal(await h.until(async () => (await spec(MERGED_DHCP_SPEC_TYPE, 'eth0'))?.enabled, true), true,
    'a config DhcpSpec turns it back on');
});

t.test('hostname and resolvers: highest layer wins, and the originals come back', async (t) => {
  const { h, spec, names, etc } = await machine(t);
  writeFileSync(join(etc, 'resolv.conf'), 'nameserver 192.0.2.53\n');
  await h.create(net(HOSTNAME_SPEC_TYPE, 'dhcp/eth0'), { hostname: 'from-dhcp', layer: 'dhcp' });
  await h.create(net(HOSTNAME_SPEC_TYPE, 'mine'), { hostname: 'node1.example.test' });
  t.match(await h.until(async () => (await spec(HOSTNAME_SPEC_STATUS_TYPE, 'hostname'))?.fqdn, 'node1.example.test')
    && await spec(HOSTNAME_SPEC_STATUS_TYPE, 'hostname'), {
    state: 'applied', hostname: 'node1', domainname: 'example.test', layer: 'config',
    original: { hostname: '(none)', domainname: '(none)' },
  });
  t.same(names, { hostname: 'node1', domainname: 'example.test' });
  await h.remove(net(HOSTNAME_SPEC_TYPE, 'mine'));
  t.equal(await h.until(() => names.hostname, 'from-dhcp'), 'from-dhcp', 'the dhcp layer takes over');
  await h.remove(net(HOSTNAME_SPEC_TYPE, 'dhcp/eth0'));
  t.same(names, { hostname: '(none)', domainname: '(none)' }, 'the original names are back');
  await h.create(net(RESOLVER_SPEC_TYPE, 'mine'), { servers: ['10.0.2.3'], searchDomains: ['example.test'] });
  t.match(await h.until(() => readFileSync(join(etc, 'resolv.conf'), 'utf8').includes('nameserver 10.0.2.3'), true),
    true);
  await h.remove(net(RESOLVER_SPEC_TYPE, 'mine'));
  t.equal(readFileSync(join(etc, 'resolv.conf'), 'utf8'), 'nameserver 192.0.2.53\n', 'resolv.conf as it was');
  t.ok(existsSync(etc));
});
