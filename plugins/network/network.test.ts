// The network plugin's controllers against the real kernel, in a private network
// namespace (needs root): real state, real runtime, converge-and-assert.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { native } from '../../native/index.ts';
import { until } from '../../init/cosi/conformance/converge.ts';
import { ControllerRuntime } from '../../init/cosi/controller/runtime.ts';
import { newResource } from '../../init/cosi/resource/resource.ts';
import { MemoryState } from '../../init/cosi/state/memory-state.ts';
import { KERNEL_CMDLINE_TYPE, RUNTIME_NS } from '../../init/engine/resource-types.ts';
import { networkPlugin } from './plugin.ts';
import { Rtnl } from './rtnetlink/client.ts';
import { ADDRESS_SPEC_TYPE, ADDRESS_STATUS_TYPE, LINK_SPEC_STATUS_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, ROUTE_SPEC_TYPE, ROUTE_STATUS_TYPE } from './types.ts';

if (process.getuid?.() !== 0) {
  t.plan(0, 'needs root (network namespaces)');
} else {
  const n = native();
  n.unshareNet();
  const rtnl = new Rtnl(n);
  rtnl.createLink('eth0', 'bridge'); // a stand-in for the machine's NIC
  const state = new MemoryState();
  await state.create(newResource({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }, { raw: 'ip=192.0.2.15::192.0.2.1:24::eth0:off', params: { ip: '192.0.2.15::192.0.2.1:24::eth0:off' } }));
  const errors: string[] = [];
  const rt = new ControllerRuntime(state, { log: () => ({ info: () => {}, warn: () => {}, error: (m) => errors.push(m) }) });
  // hostname/resolvers write /etc: they are tested apart, against a temp dir (hostname-resolvers.test.ts).
  for (const c of networkPlugin.controllers().filter((c) => c.name !== 'hostname' && c.name !== 'resolvers')) rt.register(c);
  rt.start();
  t.teardown(async () => { await rt.stop(); rtnl.close(); });

  const spec = (type: string, id: string) => state.get({ namespace: NETWORK_NS, type, id }).then((r) => r.spec as Record<string, unknown>, () => undefined);
  const kernelAddrs = () => rtnl.addresses().filter((a) => a.scope === 0).map((a) => `${a.address}/${a.prefix}`).sort();
  const eth0 = () => rtnl.links().find((l) => l.name === 'eth0')!;

  t.test('links are observed, and a change in the kernel shows within a second', async (t) => {
    t.same(await until(async () => (await state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE })).map((r) => r.metadata.id), ['eth0', 'lo']), ['eth0', 'lo']);
    await until(async () => (await spec(LINK_STATUS_TYPE, 'eth0'))?.up, true); // the ip= address brings it up
    const t0 = performance.now();
    rtnl.setLink(eth0().index, { mtu: 1280 });
    t.equal(await until(async () => (await spec(LINK_STATUS_TYPE, 'eth0'))?.mtu, 1280, 1000), 1280, 'MTU change reflected');
    t.ok(performance.now() - t0 < 1000, `in ${(performance.now() - t0).toFixed(0)} ms, by notification`);
  });

  t.test('LinkStatus lists the addresses the kernel has; IPv6 link-local comes up with the link', async (t) => {
    t.match(await until(async () => (await spec(LINK_STATUS_TYPE, 'eth0'))?.addresses, ['192.0.2.15/24']), ['192.0.2.15/24'], 'the ip= address, by notification');
    // A veth pair has a carrier once both ends are up: the kernel then adds fe80::/64.
    execFileSync('ip', ['link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1']);
    for (const name of ['v0', 'v1']) rtnl.setLink(rtnl.links().find((l) => l.name === name)!.index, { up: true });
    const ll = await until(async () => ((await spec(LINK_STATUS_TYPE, 'v0'))?.addresses as string[] | undefined)?.some((a) => a.startsWith('fe80::') && a.endsWith('/64')), true, 5000);
    t.ok(ll, `v0 has ${JSON.stringify((await spec(LINK_STATUS_TYPE, 'v0'))?.addresses)}`);
  });

  t.test('a LinkSpec sets MTU and up, puts back a change made behind its back, restores the MTU on delete', async (t) => {
    rtnl.createLink('br1', 'bridge');
    const br1 = () => rtnl.links().find((l) => l.name === 'br1')!;
    const before = br1().mtu;
    const p = { namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'br1' };
    await state.create(newResource(p, { mtu: 1400 }));
    t.equal(await until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'br1'))?.state, 'applied'), 'applied');
    t.match(br1(), { mtu: 1400, up: true }, 'in the kernel: MTU 1400, up (the default)');
    t.match(await until(async () => (await spec(LINK_STATUS_TYPE, 'br1'))?.mtu, 1400), 1400, 'and in LinkStatus');
    rtnl.setLink(br1().index, { mtu: 1300 }); // someone else changes it
    t.equal(await until(() => br1().mtu, 1400), 1400, 'put back to the spec');
    const cur = await state.get(p);
    await state.update({ ...cur, spec: { mtu: 1280, up: false } });
    t.match(await until(() => ({ mtu: br1().mtu, up: br1().up }), { mtu: 1280, up: false }), { mtu: 1280, up: false }, 'changed spec: MTU 1280, down');
    await state.teardownAndDestroy(p);
    t.equal(br1().mtu, before, `MTU back to ${before} before the spec went`);
    t.equal(await until(async () => spec(LINK_SPEC_STATUS_TYPE, 'br1'), undefined), undefined, 'status gone');
  });

  t.test('a link a LinkSpec holds down is not brought up by an address on it', async (t) => {
    rtnl.createLink('br2', 'bridge');
    const br2 = () => rtnl.links().find((l) => l.name === 'br2')!;
    let ups = 0; // every notification that shows br2 up, from before the specs exist
    const stop = rtnl.watchLinks((e) => { if (e.link.name === 'br2' && e.link.up) ups++; });
    const ls = { namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'br2' };
    const as = { namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, id: 'on-br2' };
    await state.create(newResource(ls, { up: false }));
    await state.create(newResource(as, { address: '198.51.100.77/24', link: 'br2' }));
    t.equal(await until(async () => (await spec(ADDRESS_STATUS_TYPE, 'on-br2'))?.state, 'applied'), 'applied', 'the address is applied');
    await new Promise((r) => setTimeout(r, 500));
    stop();
    t.equal(br2().up, false, 'the link stays down');
    t.equal(ups, 0, 'never brought up: no fight between address-spec and link-spec');
    await state.teardownAndDestroy(as);
    await state.teardownAndDestroy(ls);
  });

  t.test('a LinkSpec the kernel refuses, or for a missing link, says so', async (t) => {
    // The API's schema stops MTUs over 65535; the kernel's own refusal is what shows here.
    await state.create(newResource({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'eth0' }, { mtu: 70000 }));
    await state.create(newResource({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'eth7' }, { mtu: 1400 }));
    t.match(await until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'eth0'))?.error, 'the kernel refused MTU 70000 (EINVAL: outside what the link allows)'), /refused MTU 70000/);
    t.match(await until(async () => (await spec(LINK_SPEC_STATUS_TYPE, 'eth7'))?.state, 'pending') && (await spec(LINK_SPEC_STATUS_TYPE, 'eth7'))?.error, /link "eth7" does not exist/);
    await state.teardownAndDestroy({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'eth0' });
    await state.teardownAndDestroy({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'eth7' });
  });

  t.test('ip= on the kernel command line becomes an address and a default route', async (t) => {
    t.same(await until(async () => (await spec(ADDRESS_STATUS_TYPE, 'cmdline-eth0'))?.state, 'applied'), 'applied');
    t.ok(kernelAddrs().includes('192.0.2.15/24'));
    t.same(await until(async () => (await spec(ROUTE_STATUS_TYPE, 'cmdline-default-eth0'))?.state, 'applied'), 'applied');
    t.ok(rtnl.routes(4).some((r) => r.dstLen === 0 && r.gateway === '192.0.2.1'), 'default route via 192.0.2.1 in the kernel');
  });

  t.test('a user address is applied, changed, and removed on destroy', async (t) => {
    const p = { namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, id: 'extra' };
    await state.create(newResource(p, { address: '198.51.100.7/24', link: 'eth0' }));
    t.equal(await until(async () => (await spec(ADDRESS_STATUS_TYPE, 'extra'))?.state, 'applied'), 'applied');
    t.ok(kernelAddrs().includes('198.51.100.7/24'));
    const cur = await state.get(p);
    await state.update({ ...cur, metadata: { ...cur.metadata, finalizers: [...cur.metadata.finalizers] }, spec: { address: '198.51.100.8/24', link: 'eth0' } });
    t.ok(await until(async () => kernelAddrs().includes('198.51.100.8/24') && !kernelAddrs().includes('198.51.100.7/24'), true), 'old address replaced');
    await state.teardownAndDestroy(p);
    t.notOk(kernelAddrs().includes('198.51.100.8/24'), 'removed from the kernel before the spec went');
    t.equal(await until(async () => spec(ADDRESS_STATUS_TYPE, 'extra'), undefined), undefined, 'status gone');
  });

  t.test('IPv6: an address and a default route with a metric, through specs', async (t) => {
    // v0 (a veth with carrier, from the link-local test) so the kernel accepts the gateway.
    const a = { namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, id: 'v6' };
    const r = { namespace: NETWORK_NS, type: ROUTE_SPEC_TYPE, id: 'v6-default' };
    await state.create(newResource(a, { address: '2001:db8:7::10/64', link: 'v0' }));
    await state.create(newResource(r, { destination: '::/0', gateway: '2001:db8:7::1', link: 'v0', metric: 512 }));
    t.equal(await until(async () => (await spec(ADDRESS_STATUS_TYPE, 'v6'))?.state, 'applied'), 'applied');
    t.equal(await until(async () => (await spec(ROUTE_STATUS_TYPE, 'v6-default'))?.state, 'applied'), 'applied', JSON.stringify(await spec(ROUTE_STATUS_TYPE, 'v6-default')));
    const v0 = rtnl.links().find((l) => l.name === 'v0')!.index;
    t.ok(rtnl.addresses().some((x) => x.index === v0 && x.address === '2001:db8:7::10' && x.prefix === 64), 'address in the kernel');
    t.ok(rtnl.routes(6).some((x) => x.dstLen === 0 && x.gateway === '2001:db8:7::1' && x.metric === 512 && x.oif === v0), 'default route, metric 512, in the kernel');
    await state.teardownAndDestroy(r);
    await state.teardownAndDestroy(a);
    t.notOk(rtnl.routes(6).some((x) => x.dstLen === 0 && x.gateway === '2001:db8:7::1'), 'route removed');
    t.notOk(rtnl.addresses().some((x) => x.address === '2001:db8:7::10'), 'address removed');
  });

  t.test('bad input shows in the status; others keep working', async (t) => {
    await state.create(newResource({ namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, id: 'ghost' }, { address: '203.0.113.1/24', link: 'eth9' }));
    await state.create(newResource({ namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, id: 'garbage' }, { address: '300.1.1.1/24', link: 'eth0' }));
    await state.create(newResource({ namespace: NETWORK_NS, type: ROUTE_SPEC_TYPE, id: 'far' }, { destination: '203.0.113.0/24', gateway: '10.99.0.1', link: 'eth0' }));
    const ghost = await until(async () => (await spec(ADDRESS_STATUS_TYPE, 'ghost'))?.state, 'pending');
    t.equal(ghost, 'pending');
    t.match((await spec(ADDRESS_STATUS_TYPE, 'ghost'))?.error, /link "eth9" does not exist/);
    t.equal(await until(async () => (await spec(ADDRESS_STATUS_TYPE, 'garbage'))?.state, 'error'), 'error');
    t.match((await spec(ADDRESS_STATUS_TYPE, 'garbage'))?.error, /invalid address "300.1.1.1\/24"/);
    t.equal(await until(async () => (await spec(ROUTE_STATUS_TYPE, 'far'))?.state, 'error'), 'error');
    t.match((await spec(ROUTE_STATUS_TYPE, 'far'))?.error, /gateway 10.99.0.1 is not reachable from eth0/);
    t.equal((await spec(ADDRESS_STATUS_TYPE, 'cmdline-eth0'))?.state, 'applied', 'the good one stays applied');
    t.same(errors, [], 'no controller crashed');
  });
}
