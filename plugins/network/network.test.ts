// The network plugin's controllers against the real kernel, in a private network
// namespace (needs root): the controller harness, converge-and-assert. The same
// controllers run without root against the in-memory kernel in network-layers.test.ts.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { native } from '../../native/index.ts';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { networkPlugin } from './plugin.ts';
import { everyController } from '../../machinery/model/plugin.ts';
import { Rtnl } from './rtnetlink/client.ts';
import {
  ADDRESS_SPEC_TYPE, ADDRESS_SPEC_STATUS_TYPE, KERNEL_CMDLINE_TYPE, KERNEL_MODULE_SPEC_TYPE, LINK_SPEC_STATUS_TYPE,
  LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, ROUTE_SPEC_TYPE, ROUTE_SPEC_STATUS_TYPE, RULE_SPEC_STATUS_TYPE,
  RULE_SPEC_TYPE, RUNTIME_NS, SYSTEM_NS,
} from '../../proto/gen/resource-types.ts';

if (process.getuid?.() !== 0) {
  t.plan(0, 'needs root (network namespaces)');
} else {
  const n = native();
  n.unshareNet();
  const rtnl = new Rtnl(n);
  t.teardown(() => rtnl.close());
  rtnl.createLink({ name: 'eth0', kind: 'bridge' }); // a stand-in for the machine's NIC
  const ip = '192.0.2.15::192.0.2.1:24::eth0:off';
  // hostname/resolvers write /etc and DHCP needs a server: tested apart (hostname-resolvers, dhcp).
  const skip = new Set(['hostname-spec', 'resolver-spec', 'dhcp-spec']);
  const h = await controllerHarness(t, everyController(networkPlugin).filter((c) => !skip.has(c.name)), {
    codecs: builtinCodecs(builtinTypes()),
    seed: [newResource({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }, {
      raw: `ip=${ip}`, params: { ip },
    })],
  });
  const net = (type: string, id: string) => ({ namespace: NETWORK_NS, type, id });
  const spec = (type: string, id: string) => h.spec<Record<string, unknown>>(
    type === KERNEL_MODULE_SPEC_TYPE ? { namespace: SYSTEM_NS, type, id } : net(type, id));
  const kernelAddrs = () => rtnl.addresses().filter((a) => a.scope === 0).map((a) => `${a.address}/${a.prefix}`).sort();
  const link = (name: string) => rtnl.links().find((l) => l.name === name)!;

  t.test('links are observed, and a change in the kernel shows within a second', async (t) => {
    t.same(await h.until(() => h.ids({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE }), ['eth0', 'lo']),
      ['eth0', 'lo']);
    await h.until(async () => (await spec(LINK_STATUS_TYPE, 'eth0'))?.up, true); // the default layer brings it up
    const t0 = performance.now();
    rtnl.setLink(link('eth0').index, { mtu: 1280 });
    t.equal(await h.until(async () => (await spec(LINK_STATUS_TYPE, 'eth0'))?.mtu, 1280, 1000), 1280,
      'MTU change reflected');
    t.ok(performance.now() - t0 < 1000, `in ${(performance.now() - t0).toFixed(0)} ms, by notification`);
  });

  t.test('loopback is up by default (a default-layer LinkSpec)', async (t) => {
    t.equal(await h.until(() => link('lo').up, true), true, 'lo up in the kernel');
    t.match(await spec(LINK_SPEC_TYPE, 'default/lo'), { up: true, layer: 'default', link: 'lo' });
  });

  t.test('LinkStatus lists the addresses the kernel has; IPv6 link-local comes up with the link', async (t) => {
    t.match(await h.until(async () => (await spec(LINK_STATUS_TYPE, 'eth0'))?.addresses, ['192.0.2.15/24']),
      ['192.0.2.15/24'], 'the ip= address');
    // A veth pair has a carrier once both ends are up: the kernel then adds fe80::/64.
    execFileSync('ip', ['link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1']);
    for (const name of ['v0', 'v1']) rtnl.setLink(link(name).index, { up: true });
    const ll = await h.until(async () => ((await spec(LINK_STATUS_TYPE, 'v0'))?.addresses as string[] | undefined)
      ?.some((a) => a.startsWith('fe80::') && a.endsWith('/64')), true);
    t.ok(ll, `v0 has ${JSON.stringify((await spec(LINK_STATUS_TYPE, 'v0'))?.addresses)}`);
  });

  t.test('a LinkSpec sets MTU and up, puts back a change made behind its back, '
    + 'restores the MTU on delete', async (t) => {
    rtnl.createLink({ name: 'br1', kind: 'bridge' });
    const before = link('br1').mtu;
    const p = net(LINK_SPEC_TYPE, 'br1');
    await h.create(p, { mtu: 1400, up: true });
    t.equal(await h.until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'br1'))?.state, 'applied'), 'applied');
    t.match(link('br1'), { mtu: 1400, up: true }, 'in the kernel: MTU 1400, up');
    t.match(await h.until(async () => (await spec(LINK_STATUS_TYPE, 'br1'))?.mtu, 1400), 1400, 'and in LinkStatus');
    rtnl.setLink(link('br1').index, { mtu: 1300 }); // someone else changes it
    t.equal(await h.until(() => link('br1').mtu, 1400), 1400, 'put back to the spec');
    await h.update(p, { mtu: 1280, up: false });
    t.match(await h.until(() => ({ mtu: link('br1').mtu, up: link('br1').up }), { mtu: 1280, up: false }),
      { mtu: 1280, up: false }, 'changed: 1280, down');
    await h.remove(p);
    t.equal(link('br1').mtu, before, `MTU back to ${before} before the spec went`);
    t.equal(await h.until(() => spec(LINK_SPEC_STATUS_TYPE, 'br1'), undefined), undefined, 'status gone');
  });

  t.test('a link a LinkSpec holds down is not brought up by an address on it', async (t) => {
    rtnl.createLink({ name: 'br2', kind: 'bridge' });
    let ups = 0; // every notification that shows br2 up, from before the specs exist
    const stop = rtnl.watchLinks((e) => {
      if (e.link.name === 'br2' && e.link.up) ups++;
    });
    const ls = net(LINK_SPEC_TYPE, 'br2');
    const as = net(ADDRESS_SPEC_TYPE, 'on-br2');
    await h.create(ls, { up: false });
    await h.create(as, { address: '198.51.100.77/24', link: 'br2' });
    t.equal(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'br2/198.51.100.77/24'))?.state, 'applied'),
      'applied', 'the address is applied');
    await new Promise((r) => setTimeout(r, 500));
    stop();
    t.equal(link('br2').up, false, 'the link stays down: config beats the default layer');
    t.equal(ups, 0, 'never brought up');
    await h.remove(as);
    await h.remove(ls);
  });

  t.test('a LinkSpec the kernel refuses, or for a missing link, says so', async (t) => {
    // The API's schema stops MTUs over 65535; the kernel's own refusal is what shows here.
    await h.create(net(LINK_SPEC_TYPE, 'eth0'), { mtu: 70000 });
    await h.create(net(LINK_SPEC_TYPE, 'eth7'), { mtu: 1400 });
    t.match(await h.until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'eth0'))?.error,
      'the kernel refused MTU 70000 (EINVAL: outside what the link allows)'), /refused MTU 70000/);
    t.match(await h.until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'eth7'))?.state, 'pending')
      && (await spec(LINK_SPEC_STATUS_TYPE, 'eth7'))?.error, /link "eth7" does not exist/);
    await h.remove(net(LINK_SPEC_TYPE, 'eth0'));
    await h.remove(net(LINK_SPEC_TYPE, 'eth7'));
  });

  t.test('ip= on the kernel command line becomes an address and a default route', async (t) => {
    t.same(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/192.0.2.15/24'))?.state, 'applied'),
      'applied');
    t.ok(kernelAddrs().includes('192.0.2.15/24'));
    t.same(await h.until(async () => (await spec(ROUTE_SPEC_STATUS_TYPE, '0.0.0.0/0/1024'))?.state, 'applied'),
      'applied');
    t.ok(rtnl.routes(4).some((r) => r.dstLen === 0 && r.gateway === '192.0.2.1'),
      'default route via 192.0.2.1 in the kernel');
  });

  t.test('a user address is applied, changed, and removed on destroy', async (t) => {
    const p = net(ADDRESS_SPEC_TYPE, 'extra');
    await h.create(p, { address: '198.51.100.7/24', link: 'eth0' });
    t.equal(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/198.51.100.7/24'))?.state, 'applied'),
      'applied');
    t.ok(kernelAddrs().includes('198.51.100.7/24'));
    await h.update(p, { address: '198.51.100.8/24', link: 'eth0' });
    t.ok(await h.until(
      () => kernelAddrs().includes('198.51.100.8/24') && !kernelAddrs().includes('198.51.100.7/24'), true,
    ), 'old address replaced');
    t.ok(kernelAddrs().includes('192.0.2.15/24'), 'the ip= address stays');
    await h.remove(p);
    t.notOk(kernelAddrs().includes('198.51.100.8/24'), 'removed from the kernel before the spec went');
    t.equal(await h.until(() => spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/198.51.100.8/24'), undefined), undefined,
      'status gone');
  });

  t.test('IPv6: an address and a default route with a metric, through specs', async (t) => {
    // v0 (a veth with carrier, from the link-local test) so the kernel accepts the gateway.
    const a = net(ADDRESS_SPEC_TYPE, 'v6');
    const r = net(ROUTE_SPEC_TYPE, 'v6-default');
    await h.create(a, { address: '2001:db8:7::10/64', link: 'v0' });
    await h.create(r, { destination: '::/0', gateway: '2001:db8:7::1', link: 'v0', metric: 512 });
    t.equal(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'v0/2001:db8:7::10/64'))?.state, 'applied'),
      'applied');
    t.equal(await h.until(async () => (await spec(ROUTE_SPEC_STATUS_TYPE, '::/0/512'))?.state, 'applied'), 'applied',
      JSON.stringify(await spec(ROUTE_SPEC_STATUS_TYPE, '::/0/512')));
    const v0 = link('v0').index;
    t.ok(rtnl.addresses().some((x) => x.index === v0 && x.address === '2001:db8:7::10' && x.prefix === 64),
      'address in the kernel');
    t.ok(rtnl.routes(6).some((x) => x.dstLen === 0 && x.gateway === '2001:db8:7::1' && x.metric === 512
      && x.oif === v0), 'default route, metric 512');
    await h.remove(r);
    await h.remove(a);
    t.notOk(rtnl.routes(6).some((x) => x.dstLen === 0 && x.gateway === '2001:db8:7::1'), 'route removed');
    t.notOk(rtnl.addresses().some((x) => x.address === '2001:db8:7::10'), 'address removed');
  });

  t.test('bad input shows in the status; others keep working', async (t) => {
    await h.create(net(ADDRESS_SPEC_TYPE, 'ghost'), { address: '203.0.113.1/24', link: 'eth9' });
    await h.create(net(ROUTE_SPEC_TYPE, 'far'), { destination: '203.0.113.0/24', gateway: '10.99.0.1', link: 'eth0' });
    t.equal(await h.until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth9/203.0.113.1/24'))?.state, 'pending'),
      'pending');
    t.match((await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth9/203.0.113.1/24'))?.error, /link "eth9" does not exist/);
    t.equal(await h.until(async () => (await spec(ROUTE_SPEC_STATUS_TYPE, '203.0.113.0/24/1024'))?.state, 'pending'),
      'pending');
    t.match((await spec(ROUTE_SPEC_STATUS_TYPE, '203.0.113.0/24/1024'))?.error,
      /gateway 10.99.0.1 is not reachable from eth0/);
    t.equal((await spec(ADDRESS_SPEC_STATUS_TYPE, 'eth0/192.0.2.15/24'))?.state, 'applied',
      'the good one stays applied');
    t.same(h.logged.filter((l) => l.level === 'error'), [], 'no controller crashed');
  });

  t.test('a bridge declared by LinkSpecs: made, veth ports joined, STP off, rules and tables; undone on delete',
    async (t) => {
      execFileSync('ip', ['link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p0peer']);
      execFileSync('ip', ['link', 'add', 'p1', 'type', 'veth', 'peer', 'name', 'p1peer']);
      const br = net(LINK_SPEC_TYPE, 'br-lan');
      const ports = ['p0', 'p1'].map((p) => net(LINK_SPEC_TYPE, `port-${p}`));
      await h.create(br, { kind: 'bridge', bridge: { stp: false, forwardDelay: 2 } });
      for (const [i, p] of ports.entries()) await h.create(p, { link: `p${i}`, master: 'br-lan' });
      t.equal(await h.until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'br-lan'))?.created, 'bridge'), 'bridge');
      const status = await h.until(async () => {
        const p0 = await spec(LINK_STATUS_TYPE, 'p0');
        const p1 = await spec(LINK_STATUS_TYPE, 'p1');
        return [p0?.master, p1?.master];
      }, ['br-lan', 'br-lan']);
      t.same(status, ['br-lan', 'br-lan'], 'both veths are ports of the bridge, as LinkStatus reads the kernel');
      t.match(await h.until(async () => (await spec(LINK_STATUS_TYPE, 'br-lan'))?.up, true) && await spec(
        LINK_STATUS_TYPE, 'br-lan'), { kind: 'bridge', stp: false, up: true }, 'made, up (default layer), STP off');
      t.equal(link('p0').masterIndex, link('br-lan').index, 'the kernel says the same');
      // A route in another table and a rule that sends a source there, on the bridge.
      const addr = net(ADDRESS_SPEC_TYPE, 'br-addr');
      const route = net(ROUTE_SPEC_TYPE, 'br-route');
      const rule = net(RULE_SPEC_TYPE, 'br-rule');
      await h.create(addr, { address: '198.18.0.10/24', link: 'br-lan' });
      await h.create(route, { gateway: '198.18.0.1', link: 'br-lan', table: 100 });
      await h.create(rule, { from: '198.18.0.0/24', table: 100, priority: 1000 });
      t.equal(await h.until(async () => (await spec(ROUTE_SPEC_STATUS_TYPE, 'table-100/0.0.0.0/0/1024'))?.state,
        'applied'), 'applied', 'the table-100 default route');
      t.equal(await h.until(async () => (await spec(RULE_SPEC_STATUS_TYPE, 'ipv4/1000/from-198.18.0.0/24'))?.state,
        'applied'), 'applied', 'the rule');
      t.ok(rtnl.rules(4).some((r) => r.priority === 1000 && r.table === 100 && r.from === '198.18.0.0'),
        'the rule in the kernel');
      t.ok(rtnl.routes(4).some((r) => r.table === 100 && r.gateway === '198.18.0.1'), 'the route in table 100');
      await h.remove(rule);
      await h.remove(route);
      await h.remove(addr);
      t.notOk(rtnl.rules(4).some((r) => r.priority === 1000), 'the rule gone with its spec');
      await h.remove(ports[0]!);
      t.equal(await h.until(() => link('p0').masterIndex, undefined), undefined, 'p0 released when its spec went');
      await h.remove(br);
      t.equal(await h.until(() => rtnl.links().some((l) => l.name === 'br-lan'), false), false,
        'the bridge deleted when no layer declares it');
      t.equal(link('p1').masterIndex, undefined, 'and its other port released with it');
      await h.remove(ports[1]!);
    });

  t.test('a link kind the kernel cannot make yet waits for its module, and asks for it', async (t) => {
    // This host's kernel has no bonding or 8021q (EOPNOTSUPP); our kernel makes them in qemu/network.test.ts.
    let kinds: string[] = [];
    try {
      execFileSync('ip', ['link', 'add', 'probe-bond', 'type', 'bond'], { stdio: 'pipe' });
      execFileSync('ip', ['link', 'del', 'probe-bond']);
      kinds = ['bond'];
    } catch { /* no bonding here: the case this test is about */ }
    const v = net(LINK_SPEC_TYPE, 'vlan-probe');
    await h.create(v, { link: 'eth0.42', kind: 'vlan', vlan: { id: 42, parent: 'eth0' } });
    const st = await h.until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'eth0.42'))?.state, 'pending');
    if (st === 'pending') {
      t.match((await spec(LINK_SPEC_STATUS_TYPE, 'eth0.42'))?.error,
        /the kernel cannot make vlan links yet: waiting for module 8021q/);
    } else t.equal(st, 'applied', `this kernel makes VLANs itself (bond too: ${kinds.length > 0})`);
    t.match(await h.until(() => spec(KERNEL_MODULE_SPEC_TYPE, 'network/8021q'), { module: '8021q' }, 2000),
      { module: '8021q', layer: 'default' }, 'a KernelModuleSpec asks the system plugin for 8021q');
    await h.remove(v);
    t.equal(await h.until(() => spec(KERNEL_MODULE_SPEC_TYPE, 'network/8021q'), undefined), undefined,
      'no longer asked for once no link needs it');
  });
}
