// Networking of a real server, in one VM on our kernel: two virtio NICs on one QEMU hub (one
// switch) bonded active-backup from a NoCloud seed, a VLAN on the bond with a static IPv6
// address; the address and the API stay when the active port's link goes down (QMP set_link),
// and the bond fails over to the other port. Then 802.3ad and balance-xor bonds and a bridge
// with STP, declared through the API; IPv6 from QEMU's router advertisement (SLAAC, the default route);
// routing rules and tables (IPv4, IPv6). The kernel's bonding, 8021q and bridge are modules the
// network plugin asks for. Nothing leaves the host: slirp is restricted to the forwards.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi, TEST_CA_DOCUMENT } from './api-vm.ts';
import { bondSeed } from './config-seeds.ts';

const dir = mkdtempSync(join(tmpdir(), 'network-vm-'));
const seed = bondSeed(dir, TEST_CA_DOCUMENT());
// No ip= and no DHCP needed: the API is reached at the bond's address, 10.0.2.15, through the one hostfwd.
const vm = await bootWithApi({ hubNics: 2, disks: [{ file: seed, interface: 'cdrom' }] }, 'dhcp',
  { secrets: 'none' });
await vm.poll(['get', 'configstatus', 'machine', '-o', 'yaml'], /state: applied/, 90_000);
t.teardown(() => vm.vm.kill());
const yaml = async (...args: string[]) => (await vm.run(['get', ...args, '-o', 'yaml'])).out;

t.test('the seed\'s bond and VLAN are made, their modules loaded, the ports joined', async (t) => {
  const bond = (await vm.poll(['get', 'linkstatus', 'bond0', '-o', 'yaml'], /bondActive: eth0/, 60_000)).out;
  t.match(bond, /kind: bond/);
  t.match(bond, /bondMode: active-backup/);
  t.match(bond, /bondActive: eth0/, 'the primary port is the active one');
  const links = await vm.poll(['get', 'linkstatus'], /vlan7/, 30_000);
  t.match(links.out, /eth0\s.*bond0/, 'eth0 is a port of bond0');
  t.match(links.out, /eth1\s.*bond0/, 'eth1 too');
  const vlan = (await vm.poll(['get', 'linkstatus', 'vlan7', '-o', 'yaml'], /up: true/, 30_000)).out;
  t.match(vlan, /kind: vlan[\s\S]*up: true[\s\S]*parent: bond0[\s\S]*vlanId: 7/, 'the VLAN is made and up');
  const modules = (await vm.poll(['get', 'kernelmodulespecstatus'], /8021q\s+\d+\s+applied/, 30_000)).out;
  t.match(modules, /bonding\s+\d+\s+applied/, 'bonding loaded on demand');
  t.match(modules, /8021q\s+\d+\s+applied/, '8021q loaded on demand');
  const addrs = (await vm.poll(['get', 'addressspecstatus'], /fd00:7::10\/64\s.*applied/, 30_000)).out;
  t.match(addrs, /bond0\/10\.0\.2\.15\/24\s.*applied/, 'the bond has the address');
  t.match(addrs, /vlan7\/fd00:7::10\/64\s.*applied/, 'the VLAN has its static IPv6 address');
  t.match(addrs, /vlan7\/192\.168\.7\.10\/24\s.*applied/);
  t.match(await yaml('mergeddhcpspec', 'eth0'), /enabled: false/, 'no DHCP on a port');
});

t.test('the active port\'s link goes down: the bond fails over, the address and the API stay', async (t) => {
  const q = await vm.vm.qmp();
  const t0 = Date.now();
  await q.execute('set_link', { name: 'nic0', up: false });
  const after = await vm.poll(['get', 'linkstatus', 'bond0', '-o', 'yaml'], /bondActive: eth1/, 30_000);
  const failover = Date.now() - t0;
  t.equal(after.code, 0, 'the API answers through the bond while its first port is down');
  t.match(after.out, /bondActive: eth1/, `failed over to eth1 (seen through the API ${failover} ms after set_link)`);
  t.match(await yaml('linkstatus', 'eth0'), /carrier: false/, 'eth0 has no carrier');
  t.match((await vm.run(['get', 'addressspecstatus'])).out, /bond0\/10\.0\.2\.15\/24\s.*applied/,
    'the address stays on the bond');
  await q.execute('set_link', { name: 'nic0', up: true });
  const back = await vm.poll(['get', 'linkstatus', 'bond0', '-o', 'yaml'], /bondActive: eth0/, 30_000);
  t.match(back.out, /bondActive: eth0/, 'back to the primary once its link is up again');
  process.stderr.write(`bond failover (set_link to the API showing the other port active): ${failover} ms\n`);
});

t.test('bonds of the other modes, declared through the API: made with their settings, read back, deleted',
  async (t) => {
    const applied = await vm.run(['apply', '-f', '-'], [
      'metadata: {type: linkspec, id: bond-lacp}',
      'spec: {link: bond1, kind: bond, bond: {mode: 802.3ad, lacpRate: fast, miimon: 100, xmitHashPolicy: layer3+4}}',
      '---',
      'metadata: {type: linkspec, id: bond-xor}',
      'spec: {link: bond2, kind: bond, bond: {mode: balance-xor, xmitHashPolicy: layer2+3}}',
      '---',
      'metadata: {type: linkspec, id: bridge-stp}',
      'spec: {link: br9, kind: bridge, bridge: {stp: true, forwardDelay: 4}}',
      '---',
      'metadata: {type: addressspec, id: on-br9}',
      'spec: {address: 192.168.9.1/24, link: br9}',
    ].join('\n'));
    t.equal(applied.code, 0, applied.err);
    t.notMatch(applied.err, /no link/, 'no warning for links the same input makes, nor for an address on one');
    t.match((await vm.poll(['get', 'linkstatus', 'bond1', '-o', 'yaml'], /bondMode/, 30_000)).out,
      /bondMode: 802\.3ad/, 'an 802.3ad bond');
    t.match((await vm.poll(['get', 'linkstatus', 'bond2', '-o', 'yaml'], /bondMode/, 30_000)).out,
      /bondMode: balance-xor/, 'a balance-xor bond');
    t.match((await vm.poll(['get', 'linkstatus', 'br9', '-o', 'yaml'], /stp: true/, 30_000)).out,
      /kind: bridge[\s\S]*stp: true/, 'a bridge with spanning tree on (the bridge module loaded for it)');
    t.match((await vm.run(['get', 'linkspecstatus', 'bond1', '-o', 'yaml'])).out, /created: bond/);
    t.match((await vm.poll(['get', 'addressspecstatus'], /br9\/192\.168\.9\.1\/24\s.*applied/, 30_000)).out,
      /br9\/192\.168\.9\.1\/24\s.*applied/, 'the address on the new bridge');
    t.equal((await vm.run(['delete', 'addressspec', 'on-br9'])).code, 0);
    for (const id of ['bond-lacp', 'bond-xor', 'bridge-stp']) {
      t.equal((await vm.run(['delete', 'linkspec', id])).code, 0, `delete linkspec ${id}`);
    }
    const gone = await vm.poll(['get', 'linkstatus'], /^(?![\s\S]*\b(bond1|bond2|br9)\b)/, 30_000);
    t.notMatch(gone.out, /\b(bond1|bond2|br9)\b/, 'each deleted when its spec went');
    t.match(gone.out, /bond0/, 'the seed\'s bond stays');
  });

t.test('IPv6 from QEMU\'s router advertisement: a SLAAC address and the default route, through the API',
  async (t) => {
    // QEMU's user network advertises fec0::/64 (M and O clear) when a solicitation asks; it adds RDNSS only when
    // the host has an IPv6 name server and answers DHCPv6 only when not restricted, so those two are tested
    // against dnsmasq (plugins/network/dhcp6/ipv6.test.ts) and in qemu/dhcp.test.ts.
    const bond = (await vm.poll(['get', 'linkstatus', 'bond0', '-o', 'yaml'], /ipv6Router: none/, 60_000)).out;
    t.match(bond, /- fec0::[0-9a-f:]+\/64/, 'a SLAAC address in the advertised prefix');
    t.match(bond, /ipv6Router: none/, 'the advertisement asked for no DHCPv6');
    const routes = await vm.poll(['get', 'kernelroute'], /::\/0\s+fe80::[0-9a-f:]+\s+bond0\s+\d+\s+ra\b/, 30_000);
    t.match(routes.out, /::\/0\s+fe80::[0-9a-f:]+\s+bond0\s+\d+\s+ra\b/, 'the default route the advertisement gave');
    t.match(routes.out, /0\.0\.0\.0\/0\s+10\.0\.2\.2\s+bond0\s+\d+\s+static\b/, 'beside the seed\'s IPv4 one');
  });

t.test('routing policy on our kernel: rules and routes in other tables, IPv4 and IPv6, read back from it',
  async (t) => {
    const applied = await vm.run(['apply', '-f', '-'], [
      'metadata: {type: routespec, id: t100-v4}',
      'spec: {destination: 198.51.100.0/24, gateway: 10.0.2.2, link: bond0, table: 100}',
      '---',
      'metadata: {type: routespec, id: t100-v6}',
      'spec: {destination: "2001:db8:100::/48", gateway: "fd00:7::1", link: vlan7, table: 100, onLink: true}',
      '---',
      'metadata: {type: rulespec, id: from-vlan-v4}',
      'spec: {from: 192.168.7.0/24, table: 100, priority: 1000}',
      '---',
      'metadata: {type: rulespec, id: from-vlan-v6}',
      'spec: {from: "fd00:7::/64", table: 100, priority: 1000}',
    ].join('\n'));
    t.equal(applied.code, 0, applied.err);
    const rules = await vm.poll(['get', 'rulespecstatus'], /^(?![\s\S]*(pending|error))[\s\S]*fd00:7::\/64/, 30_000);
    t.equal((rules.out.match(/applied/g) ?? []).length, 2, 'both rules applied (IPv4 and IPv6)');
    const routes = await vm.poll(['get', 'kernelroute'], /table-100\/2001:db8:100::\/48/, 30_000);
    t.match(routes.out, /table-100\/198\.51\.100\.0\/24\/\d+\/bond0/, 'the IPv4 route in table 100');
    t.match(routes.out, /table-100\/2001:db8:100::\/48\/\d+\/vlan7/, 'the IPv6 route in table 100, on the VLAN');
    for (const [type, id] of [['rulespec', 'from-vlan-v4'], ['rulespec', 'from-vlan-v6'], ['routespec', 't100-v4'],
      ['routespec', 't100-v6']]) {
      t.equal((await vm.run(['delete', type!, id!])).code, 0, `delete ${type} ${id}`);
    }
    t.notMatch((await vm.poll(['get', 'kernelroute'], /^(?![\s\S]*table-100)/, 30_000)).out, /table-100/,
      'the routes go with their specs');
  });
