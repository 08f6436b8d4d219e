// IPv6 against a real router and DHCPv6 server (dnsmasq) over veth pairs in private network
// namespaces (needs root). Two links, each on its own network:
//   v6a  RA with M set (prefix not for SLAAC): the auto mode runs a stateful client (IA_NA), the
//        address is applied as /128, renewed at T1, released on stop
//   v6b  RA with O and A set: a SLAAC address and default route from the kernel, and a stateless
//        client (Information-Request) for the options
// On both: RDNSS/DNSSL reach a ResolverSpec through RTM_NEWNDUSEROPT, the RA's default route shows
// as a KernelRoute (protocol ra), and the link's LinkStatus says what the RA asked for.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { native } from '../../../native/index.ts';
import { until } from '../../../cosi/conformance/converge.ts';
import { controllerHarness } from '../../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../../cosi/resource/resource.ts';
import { builtinCodecs } from '../../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../../index.ts';
import { addressMergeController } from '../address-merge.ts';
import { addressSpecController } from '../address-spec.ts';
import { dhcpMergeController } from '../dhcp-merge.ts';
import { dhcp6SpecController } from '../dhcp6-spec.ts';
import { linkMergeController } from '../link-merge.ts';
import { linkSpecController } from '../link-spec.ts';
import { linkStatusController } from '../link-status.ts';
import { Rtnl } from '../rtnetlink/client.ts';
import { routeStatusController } from '../route-status.ts';
import { routerDnsController } from '../router-dns.ts';
import { DNSMASQ, startDnsmasq } from '../testing/dnsmasq-netns.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, DHCP6_LEASE_TYPE, DHCP_SPEC_TYPE, KERNEL_ROUTE_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE,
  NETWORK_NS, RESOLVER_SPEC_TYPE,
} from '../../../proto/gen/resource-types.ts';

if (process.getuid?.() !== 0 || !DNSMASQ) {
  t.plan(0, 'needs root and dnsmasq (npm run setup installs dnsmasq-base)');
} else {
  const n = native();
  n.unshareNet();
  execFileSync('ip', ['link', 'set', 'lo', 'up']);
  const server = startDnsmasq('cosi-dhcp6', [
    { local: 'v6a', peer: 'v6a1', addresses: ['2001:db8:1::1/64'] },
    { local: 'v6b', peer: 'v6b1', addresses: ['2001:db8:2::1/64'] },
  ], [
    '--enable-ra', '--log-dhcp',
    // Stateful on v6a (RA: M), stateless on v6b (RA: O and the prefix for SLAAC). The shortest lease dnsmasq
    // gives is 2 minutes: the client's time scale makes T1 (1 minute) 3 s.
    '--dhcp-range=2001:db8:1::100,2001:db8:1::1ff,64,2m', '--dhcp-range=2001:db8:2::,ra-stateless,64',
    '--dhcp-option=option6:dns-server,[2001:db8::53]', '--dhcp-option=option6:domain-search,lab6.test',
    '--dhcp-option=option6:ntp-server,[2001:db8::123]',
  ]);

  const rtnl = new Rtnl(n);
  const r = () => rtnl;
  const t0 = performance.now();
  const h = await controllerHarness(t, [
    linkStatusController(r), linkMergeController(), linkSpecController(r), addressMergeController(),
    addressSpecController(r), dhcpMergeController(), dhcp6SpecController({ timeScale: 0.05 }), routerDnsController(r),
    routeStatusController(r),
  ], {
    codecs: builtinCodecs(builtinTypes()),
    seed: ['v6a', 'v6b'].flatMap((link) => [
      newResource({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: link }, { up: true }),
      newResource({ namespace: NETWORK_NS, type: DHCP_SPEC_TYPE, id: link }, { ipv6: 'auto' }),
    ]),
  });
  t.teardown(async () => {
    await h.runtime.stop();
    server.stop();
    rtnl.close();
  });
  const spec = (type: string, id: string) => h.spec<Record<string, unknown>>({ namespace: NETWORK_NS, type, id });
  /** Polls until get() gives something (or the time is up) and returns it. */
  const eventually = async <T>(get: () => Promise<T | undefined>, ms: number): Promise<T | undefined> => {
    await until(async () => (await get()) !== undefined, true, ms);
    return get();
  };
  const since = () => `${((performance.now() - t0) / 1000).toFixed(2)} s after start`;

  t.test('each link says what its router advertisement asked for', async (t) => {
    t.equal(await until(async () => (await spec(LINK_STATUS_TYPE, 'v6a'))?.ipv6Router, 'managed', 15_000),
      'managed', `v6a: M (${since()})`);
    t.equal(await until(async () => (await spec(LINK_STATUS_TYPE, 'v6b'))?.ipv6Router, 'other', 15_000),
      'other', 'v6b: O');
  });

  t.test('v6b: a SLAAC address and the RA\'s default route, seen through the API', async (t) => {
    const slaac = await eventually(async () => ((await spec(LINK_STATUS_TYPE, 'v6b'))?.addresses as string[])
      .find((a) => a.startsWith('2001:db8:2:')), 15_000);
    t.match(slaac, /^2001:db8:2:0:[0-9a-f:]+\/64$/, `SLAAC address ${slaac} (${since()})`);
    const route = await eventually(async () => (await h.state.list({ namespace: NETWORK_NS, type: KERNEL_ROUTE_TYPE }))
      .find((x) => x.metadata.id.startsWith('::/0/') && (x.spec as { link?: string }).link === 'v6b'), 15_000);
    t.match(route?.spec, { destination: '::/0', protocol: 'ra', link: 'v6b', gateway: /^fe80::/ },
      `default route ${route?.metadata.id} via the router's link-local address`);
  });

  t.test('v6a: the auto mode runs a stateful client; its address is applied', async (t) => {
    t.equal(await until(async () => (await spec(DHCP6_LEASE_TYPE, 'v6a'))?.state, 'bound', 20_000), 'bound',
      `bound ${since()}`);
    const lease = await spec(DHCP6_LEASE_TYPE, 'v6a');
    t.match(lease, { mode: 'stateful', dns: ['2001:db8::53'], domains: ['lab6.test'], ntp: ['2001:db8::123'] });
    const address = (lease!.addresses as string[])[0]!;
    t.match(address, /^2001:db8:1::1[0-9a-f]{2}\/128$/, 'from the range, as /128');
    t.equal(await until(async () => (await spec(ADDRESS_SPEC_STATUS_TYPE, `v6a/${address}`))?.state, 'applied'),
      'applied', 'applied');
    const idx = rtnl.links().find((l) => l.name === 'v6a')!.index;
    t.ok(rtnl.addresses().some((a) => a.index === idx && `${a.address}/${a.prefix}` === address), 'in the kernel');
    t.notOk(((await spec(LINK_STATUS_TYPE, 'v6a'))?.addresses as string[]).some((a) => a.endsWith('/64')
      && a.startsWith('2001:')), 'no SLAAC address where the prefix is not for autoconfiguration');
    const exchange = new RegExp(['SOLICIT', 'ADVERTISE', 'REQUEST', 'REPLY'].map((m) => `DHCP${m}\\(v6a1\\)`)
      .join('[\\s\\S]*'));
    t.ok(await until(() => exchange.test(server.log()), true, 5000),
      'Solicit, Advertise, Request, Reply at the server');
  });

  t.test('v6b: the stateless client gets the options', async (t) => {
    t.equal(await until(async () => (await spec(DHCP6_LEASE_TYPE, 'v6b'))?.state, 'informed', 20_000), 'informed');
    const lease = await spec(DHCP6_LEASE_TYPE, 'v6b');
    t.match(lease, { mode: 'stateless', dns: ['2001:db8::53'], domains: ['lab6.test'] });
    t.notOk((lease?.addresses as string[] | undefined)?.length, 'no addresses');
    t.ok(await until(() => /DHCPINFORMATION-REQUEST\(v6b1\)/.test(server.log()), true, 5000), 'the server saw it');
  });

  t.test('DNS from the router advertisements (RDNSS, DNSSL)', async (t) => {
    for (const link of ['v6a', 'v6b']) {
      t.match(await eventually(() => spec(RESOLVER_SPEC_TYPE, `ra/${link}`), 15_000),
        { servers: ['2001:db8::53'], searchDomains: ['lab6.test'], layer: 'dhcp' }, `ra/${link}`);
    }
  });

  t.test('the stateful lease is renewed at T1 with the same address', async (t) => {
    const before = await spec(DHCP6_LEASE_TYPE, 'v6a');
    t.ok(await until(() => /DHCPRENEW\(v6a1\)/.test(server.log()), true, 15_000), 'the server saw a Renew');
    t.ok(await until(async () => (await spec(DHCP6_LEASE_TYPE, 'v6a'))?.acquired !== before?.acquired, true, 5000),
      'a new acquisition time');
    t.match(await spec(DHCP6_LEASE_TYPE, 'v6a'), { state: 'bound', addresses: before?.addresses });
  });

  t.test('accept_ra: false is written to the link\'s IPv6 settings', async (t) => {
    await h.create({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'v6b-ra' }, { link: 'v6b', acceptRa: false });
    const conf = (key: string) => readFileSync(`/proc/sys/net/ipv6/conf/v6b/${key}`, 'utf8').trim();
    t.equal(await until(() => conf('accept_ra'), '0', 5000), '0', 'accept_ra 0');
    t.equal(conf('autoconf'), '0', 'autoconf 0');
  });

  t.test('stopping releases the stateful lease', async (t) => {
    await h.runtime.stop();
    t.ok(await until(() => /DHCPRELEASE\(v6a1\)/.test(server.log()), true, 5000), 'the server saw a Release');
  });
}
