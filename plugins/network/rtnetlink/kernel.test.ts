// rtnetlink against the real kernel, in a private network namespace (needs root).
import t from 'tap';
import { native } from '../../../native/index.ts';
import { Rtnl, type LinkEvent } from './client.ts';

if (process.getuid?.() !== 0) {
  t.plan(0, 'needs root (network namespaces)');
} else {
  const n = native();
  n.unshareNet(); // this test process only: the host's links are out of reach from here on
  const rtnl = new Rtnl(n);
  t.teardown(() => rtnl.close());

  t.test('a fresh namespace has only lo, down; bringing it up shows', async (t) => {
    const links = rtnl.links();
    t.same(links.map((l) => [l.name, l.up]), [['lo', false]]);
    rtnl.setLink(links[0]!.index, { up: true });
    t.equal(rtnl.links()[0]!.up, true);
  });

  // A standalone bridge: every kernel we test on has it (the CI host has no dummy driver).
  t.test('create, change and delete a link; errors carry errno names', async (t) => {
    rtnl.createLink({ name: 'br-test', kind: 'bridge', mtu: 1400 });
    const d = rtnl.links().find((l) => l.name === 'br-test')!;
    t.equal(d.kind, 'bridge');
    t.equal(d.mtu, 1400);
    rtnl.setLink(d.index, { mtu: 9000, up: true });
    const after = rtnl.links().find((l) => l.name === 'br-test')!;
    t.same([after.mtu, after.up], [9000, true]);
    t.throws(() => rtnl.createLink({ name: 'br-test', kind: 'bridge' }), { name: 'NetlinkError', code: 'EEXIST' });
    t.throws(() => rtnl.setLink(999, { up: true }), { name: 'NetlinkError', code: 'ENODEV' });
    t.throws(() => rtnl.setLink(d.index, { mtu: 10 }), { name: 'NetlinkError', code: 'EINVAL' },
      'MTU below the minimum');
    rtnl.deleteLink(d.index);
    t.notOk(rtnl.links().some((l) => l.name === 'br-test'));
  });

  t.test('kernel notifications arrive within a second', async (t) => {
    rtnl.createLink({ name: 'br-events', kind: 'bridge' });
    const idx = rtnl.links().find((l) => l.name === 'br-events')!.index;
    const events: (LinkEvent & { at: number })[] = [];
    const stop = rtnl.watchLinks((e) => events.push({ ...e, at: performance.now() }));
    t.teardown(stop);
    const t0 = performance.now();
    rtnl.setLink(idx, { up: true });
    rtnl.setLink(idx, { up: false });
    rtnl.deleteLink(idx);
    for (let i = 0; i < 100 && !events.some((e) => e.type === 'del'); i++) await new Promise((r) => setTimeout(r, 10));
    const mine = events.filter((e) => e.link.name === 'br-events');
    t.ok(mine.some((e) => e.type === 'new' && e.link.up), 'went up');
    t.ok(mine.some((e) => e.type === 'new' && !e.link.up), 'went down');
    const del = mine.find((e) => e.type === 'del');
    t.ok(del, 'deleted');
    t.ok(del && del.at - t0 < 1000, `delivered in ${del ? (del.at - t0).toFixed(1) : '?'} ms`);
  });
}

if (process.getuid?.() === 0) {
  t.test('addresses and routes, IPv4 and IPv6, added and removed', async (t) => {
    const rtnl = new Rtnl(native());
    t.teardown(() => rtnl.close());
    rtnl.createLink({ name: 'br-addr', kind: 'bridge' });
    const idx = rtnl.links().find((l) => l.name === 'br-addr')!.index;
    rtnl.setLink(idx, { up: true });
    rtnl.address('add', idx, '192.0.2.10', 24);
    rtnl.address('add', idx, '2001:db8::10', 64);
    const mine = () => rtnl.addresses().filter((a) => a.index === idx && a.scope === 0)
      .map((a) => `${a.address}/${a.prefix}`).sort();
    t.same(mine(), ['192.0.2.10/24', '2001:db8::10/64']);
    rtnl.address('add', idx, '192.0.2.10', 24); // NLM_F_REPLACE: applying twice is fine
    rtnl.route('add', { dst: '0.0.0.0', dstLen: 0, gateway: '192.0.2.1', oif: idx, metric: 1024 });
    rtnl.route('add', { dst: '198.51.100.0', dstLen: 24, gateway: '192.0.2.254', oif: idx });
    const v4 = rtnl.routes(4).filter((r) => r.oif === idx && r.protocol === 4);
    t.same(v4.map((r) => `${r.dst}/${r.dstLen} via ${r.gateway} metric ${r.metric ?? 0}`).sort(),
      ['0.0.0.0/0 via 192.0.2.1 metric 1024', '198.51.100.0/24 via 192.0.2.254 metric 0']);
    t.throws(() => rtnl.route('add', { dst: '203.0.113.0', dstLen: 24, gateway: '10.9.9.9', oif: idx }),
      { code: 'ENETUNREACH' }, 'unreachable gateway is refused');
    t.throws(() => rtnl.address('add', 9999, '192.0.2.11', 24), { code: 'ENODEV' });
    rtnl.route('del', { dst: '0.0.0.0', dstLen: 0, gateway: '192.0.2.1', oif: idx, metric: 1024 });
    rtnl.address('del', idx, '2001:db8::10', 64);
    t.same(mine(), ['192.0.2.10/24']);
    t.notOk(rtnl.routes(4).some((r) => r.oif === idx && r.dstLen === 0), 'default route gone');
    rtnl.deleteLink(idx);
  });
}

if (process.getuid?.() === 0) {
  t.test('route attributes and routing policy rules, read back from the kernel', async (t) => {
    const rtnl = new Rtnl(native());
    t.teardown(() => rtnl.close());
    rtnl.createLink({ name: 'br-pol', kind: 'bridge' });
    const idx = rtnl.links().find((l) => l.name === 'br-pol')!.index;
    rtnl.setLink(idx, { up: true });
    rtnl.address('add', idx, '192.0.2.10', 32); // a /32, as clouds give: the gateway is reachable only on-link
    rtnl.address('add', idx, '2001:db8:1::10', 64);
    t.throws(() => rtnl.route('add', { dst: '0.0.0.0', dstLen: 0, gateway: '198.51.100.1', oif: idx }),
      { code: 'ENETUNREACH' }, 'off-subnet gateway without onlink');
    rtnl.route('add', { dst: '0.0.0.0', dstLen: 0, gateway: '198.51.100.1', oif: idx, onLink: true, metric: 100,
      table: 100, source: '192.0.2.10', mtu: 1400 });
    rtnl.route('add', { dst: '203.0.113.0', dstLen: 24, kind: 'blackhole', table: 100 });
    rtnl.route('add', { dst: '2001:db8:9::', dstLen: 48, kind: 'unreachable', table: 70000 });
    rtnl.route('add', { dst: '::', dstLen: 0, gateway: '2001:db8:1::1', oif: idx, metric: 512 });
    const v4 = rtnl.routes(4).filter((r) => r.table === 100);
    const dflt = v4.find((r) => r.dstLen === 0)!;
    t.same([dflt.gateway, dflt.oif, dflt.metric, dflt.onLink, dflt.source, dflt.mtu],
      ['198.51.100.1', idx, 100, true, '192.0.2.10', 1400], 'table 100 default route with every attribute');
    t.same(v4.filter((r) => r.type === 6).map((r) => `${r.dst}/${r.dstLen}`), ['203.0.113.0/24'], 'blackhole');
    t.ok(rtnl.routes(6).some((r) => r.table === 70000 && r.type === 7 && r.dst === '2001:db8:9::'),
      'unreachable route in a table above 255');
    t.ok(rtnl.routes(6).some((r) => r.table === 254 && r.dstLen === 0 && r.gateway === '2001:db8:1::1'),
      'IPv6 default route in main beside the IPv4 one of table 100');

    rtnl.rule('add', { family: 4, from: { ip: '192.0.2.0', prefix: 24 }, table: 100, priority: 1000 });
    rtnl.rule('add', { family: 6, to: { ip: '2001:db8:9::', prefix: 48 }, table: 70000, priority: 1001, mark: 7 });
    t.throws(() => rtnl.rule('add', { family: 4, from: { ip: '192.0.2.0', prefix: 24 }, table: 100, priority: 1000 }),
      { code: 'EEXIST' }, 'the same rule twice');
    const r4 = rtnl.rules(4).find((r) => r.priority === 1000)!;
    t.same([r4.from, r4.fromLen, r4.table], ['192.0.2.0', 24, 100]);
    const r6 = rtnl.rules(6).find((r) => r.priority === 1001)!;
    t.same([r6.to, r6.toLen, r6.table, r6.mark], ['2001:db8:9::', 48, 70000, 7]);
    rtnl.rule('del', { family: 4, from: { ip: '192.0.2.0', prefix: 24 }, table: 100, priority: 1000 });
    t.throws(() => rtnl.rule('del', { family: 4, from: { ip: '192.0.2.0', prefix: 24 }, table: 100, priority: 1000 }),
      { code: 'ENOENT' }, 'deleting a rule that is gone');
    rtnl.route('del', { dst: '203.0.113.0', dstLen: 24, kind: 'blackhole', table: 100 });
    t.notOk(rtnl.routes(4).some((r) => r.type === 6), 'blackhole deleted');
    rtnl.deleteLink(idx);
  });
}
