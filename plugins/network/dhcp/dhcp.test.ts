// The DHCP client against a real DHCP server (dnsmasq) over a veth pair in a private
// network namespace (needs root): lease, address/route/resolver specs, release.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { native } from '../../../native/index.ts';
import { until } from '../../../cosi/conformance/converge.ts';
import { controllerHarness } from '../../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../../cosi/resource/resource.ts';
import { builtinCodecs } from '../../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../../index.ts';
import { addressMergeController } from '../address-merge.ts';
import { addressSpecController } from '../address-spec.ts';
import { dhcpMergeController } from '../dhcp-merge.ts';
import { dhcpSpecController } from '../dhcp-spec.ts';
import { linkMergeController } from '../link-merge.ts';
import { linkSpecController } from '../link-spec.ts';
import { linkStatusController } from '../link-status.ts';
import { Rtnl } from '../rtnetlink/client.ts';
import { routeMergeController } from '../route-merge.ts';
import { routeSpecController } from '../route-spec.ts';
import { DNSMASQ, startDnsmasq } from '../testing/dnsmasq-netns.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, DHCP_LEASE_TYPE, DHCP_SPEC_TYPE, LINK_SPEC_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE,
  ROUTE_SPEC_STATUS_TYPE, TIME_NS, TIME_SERVER_SPEC_TYPE,
} from '../../../proto/gen/resource-types.ts';

if (process.getuid?.() !== 0 || !DNSMASQ) {
  t.plan(0, 'needs root and dnsmasq (npm run setup installs dnsmasq-base)');
} else {
  const n = native();
  n.unshareNet();
  execFileSync('ip', ['link', 'set', 'lo', 'up']);
  const server = startDnsmasq('cosi-dhcp', [{ local: 'dh0', peer: 'dh1', addresses: ['192.0.2.1/24'] }], [
    '--dhcp-range=192.0.2.50,192.0.2.99,255.255.255.0,2m', '--dhcp-option=option:router,192.0.2.1',
    '--dhcp-option=option:dns-server,192.0.2.53', '--dhcp-option=option:domain-name,lab.test',
    '--dhcp-option=option:ntp-server,192.0.2.123',
    // dnsmasq's shortest lease is 2 minutes; T1 = 3 s makes the client renew during the test.
    '--dhcp-option=option:T1,3', '--dhcp-authoritative', '--log-dhcp',
  ]);

  const rtnl = new Rtnl(n);
  const r = () => rtnl;
  const t0 = performance.now();
  // dh0 is a veth: no default layer turns DHCP on for it, so the test's config does.
  const h = await controllerHarness(t, [
    linkStatusController(r), linkMergeController(), linkSpecController(r), addressMergeController(),
    addressSpecController(r), routeMergeController(), routeSpecController(r), dhcpMergeController(),
    dhcpSpecController(() => n, { retryMs: 500 }),
  ], {
    codecs: builtinCodecs(builtinTypes()),
    seed: [
      newResource({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'dh0' }, { up: true }),
      newResource({ namespace: NETWORK_NS, type: DHCP_SPEC_TYPE, id: 'dh0' }, { enabled: true }),
    ],
  });
  t.teardown(async () => {
    await h.runtime.stop();
    server.stop();
    rtnl.close();
  });
  const status = (type: string, id: string, namespace = NETWORK_NS) =>
    h.spec<Record<string, unknown>>({ namespace, type, id });

  t.test('a lease from dnsmasq becomes the link\'s address, default route and resolver', async (t) => {
    t.equal(await until(async () => (await status(DHCP_LEASE_TYPE, 'dh0'))?.state, 'bound', 15_000), 'bound',
      `bound ${(performance.now() - t0).toFixed(0)} ms after start`);
    const lease = await status(DHCP_LEASE_TYPE, 'dh0');
    t.equal(await until(async () => (await status(ADDRESS_SPEC_STATUS_TYPE, `dh0/${lease!.address}`))?.state,
      'applied'),
      'applied', 'address applied');
    t.match(lease, {
      state: 'bound', server: '192.0.2.1', gateway: '192.0.2.1', dns: ['192.0.2.53'], leaseSeconds: 120,
    });
    const addr = String(lease!.address);
    t.match(addr, /^192\.0\.2\.(5\d|[6-9]\d)\/24$/, 'from the pool');
    const idx = rtnl.links().find((l) => l.name === 'dh0')!.index;
    t.ok(rtnl.addresses().some((a) => a.index === idx && `${a.address}/${a.prefix}` === addr), 'in the kernel');
    t.equal(await until(async () => (await status(ROUTE_SPEC_STATUS_TYPE, '0.0.0.0/0/1024'))?.state, 'applied'),
      'applied');
    t.ok(rtnl.routes(4).some((x) => x.dstLen === 0 && x.gateway === '192.0.2.1' && x.oif === idx),
      'default route via the server');
    t.match(await status(RESOLVER_SPEC_TYPE, 'dhcp/dh0'),
      { servers: ['192.0.2.53'], searchDomains: ['lab.test'], layer: 'dhcp' });
    t.match(await status(TIME_SERVER_SPEC_TYPE, 'dhcp/dh0', TIME_NS), { servers: ['192.0.2.123'], layer: 'dhcp' },
      'option 42 becomes a TimeServerSpec');
    // dnsmasq's log reaches us through a pipe, possibly after the lease took effect here.
    const exchange = /DHCPDISCOVER\(dh1\)[\s\S]*DHCPOFFER[\s\S]*DHCPREQUEST[\s\S]*DHCPACK/;
    t.ok(await until(() => exchange.test(server.log()), true, 5000), 'the full exchange, seen by the server');
  });

  t.test('the lease is renewed at T1 with the same server and address', async (t) => {
    const first = await status(DHCP_LEASE_TYPE, 'dh0');
    const acks = () => server.log().match(/DHCPACK\(dh1\)/g)?.length ?? 0;
    const before = acks();
    t.ok(await until(() => acks() > before, true, 10_000), `the server acked a renewal (${acks() - before} more ACK)`);
    t.match(server.log(), /DHCPREQUEST\(dh1\)[^\n]*\n[\s\S]*DHCPREQUEST\(dh1\)/, 'a second REQUEST');
    const renewed = await until(
      async () => (await status(DHCP_LEASE_TYPE, 'dh0'))?.acquired !== first?.acquired, true, 5000,
    );
    t.ok(renewed, 'the lease resource shows the new acquisition time');
    t.match(await status(DHCP_LEASE_TYPE, 'dh0'), { state: 'bound', address: first?.address },
      'same address, still bound');
    t.equal((await status(ADDRESS_SPEC_STATUS_TYPE, `dh0/${first?.address}`))?.state, 'applied',
      'the address stayed applied throughout');
  });

  t.test('stopping releases the lease', async (t) => {
    await h.runtime.stop();
    t.ok(await until(() => /DHCPRELEASE\(dh1\)/.test(server.log()), true, 5000), 'the server saw DHCPRELEASE');
  });
}
