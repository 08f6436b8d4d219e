// router-dns without a kernel: RDNSS/DNSSL options fed as the kernel would hand them over, with
// lifetimes on a clock the test moves. The real kernel path is dhcp6/ipv6.test.ts.
import t from 'tap';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { dhcp6ModeOf } from './dhcp6-spec.ts';
import { memoryIpv6Conf } from './ipv6-conf.ts';
import type { RaDnsOptions } from './rtnetlink/nduseropt.ts';
import { routerDnsController, RouterDns } from './router-dns.ts';
import { LINK_STATUS_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

t.test('lifetimes: kept until they run out, 0 withdraws, infinity stays', async (t) => {
  const dns = new RouterDns();
  dns.heard({
    index: 2, servers: [{ address: '2001:db8::1', lifetime: 10 }, { address: '2001:db8::2', lifetime: 0xffffffff }],
    domains: [{ name: 'a.test', lifetime: 5 }],
  }, 0);
  t.same(dns.current(1000).links.get(2), { servers: ['2001:db8::1', '2001:db8::2'], domains: ['a.test'] });
  t.equal(dns.current(1000).nextExpiry, 5000, 'the domain expires first');
  t.same(dns.current(6000).links.get(2), { servers: ['2001:db8::1', '2001:db8::2'], domains: [] });
  dns.heard({ index: 2, servers: [{ address: '2001:db8::2', lifetime: 0 }], domains: [] }, 7000);
  t.same(dns.current(7000).links.get(2)?.servers, ['2001:db8::1'], 'lifetime 0: gone at once');
  t.equal(dns.current(11_000).links.get(2), undefined, 'nothing left: the link is forgotten');
});

t.test('the controller: a ResolverSpec per link at the dhcp layer, none where accept_ra is 0', async (t) => {
  let emit: ((o: RaDnsOptions) => void) | undefined;
  const conf = memoryIpv6Conf();
  conf.set('eth1', 'accept_ra', 0);
  let clock = 0;
  const link = (index: number) => ({ index, type: 'ether', up: true, operState: 'up' });
  const h = await controllerHarness(t, [routerDnsController(() => ({
    watchRaDns: (cb) => {
      emit = cb;
      return () => {};
    },
  }), conf, () => clock)], {
    codecs: builtinCodecs(builtinTypes()),
    seed: [newResource({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'eth0' }, link(2)),
      newResource({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'eth1' }, link(3))],
  });
  t.teardown(() => h.runtime.stop());
  await h.until(() => emit !== undefined, true); // the controller listens from its start
  const servers = [1, 2, 3, 4].map((i) => ({ address: `2001:db8::${i}`, lifetime: 60 }));
  emit!({ index: 2, servers, domains: [{ name: 'lab.test', lifetime: 60 }] });
  emit!({ index: 3, servers, domains: [] });
  t.same(await h.until(() => h.spec({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, id: 'ra/eth0' }), {
    servers: ['2001:db8::1', '2001:db8::2', '2001:db8::3'], searchDomains: ['lab.test'], layer: 'dhcp',
  }), { servers: ['2001:db8::1', '2001:db8::2', '2001:db8::3'], searchDomains: ['lab.test'], layer: 'dhcp' },
  'the first three servers (resolv.conf takes three)');
  t.same(await h.ids({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE }), ['ra/eth0'],
    'eth1 ignores advertisements');
  // An advertisement on a link LinkStatus does not know yet (a VLAN just made) waits for it, not dropped.
  emit!({ index: 9, servers: [{ address: '2001:db8::99', lifetime: 600 }], domains: [] });
  await h.create({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'vlan9' }, link(9));
  const vlan9 = async () => (await h.spec<{ servers?: string[] }>(
    { namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, id: 'ra/vlan9' }))?.servers;
  t.same(await h.until(vlan9, ['2001:db8::99']), ['2001:db8::99'], 'kept until the link shows');
  clock = 61_000;
  emit!({ index: 2, servers: [], domains: [] });
  t.same(await h.until(() => h.ids({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE }), ['ra/vlan9']), ['ra/vlan9'],
    'gone when the lifetime has passed (vlan9\'s has not)');
});

t.test('auto follows the router advertisement', async (t) => {
  const link = (ipv6Router?: string) => ({
    index: 1, type: 'ether', up: true, operState: 'up', ...(ipv6Router ? { ipv6Router } : {}),
  });
  t.equal(dhcp6ModeOf('auto', link('managed')), 'stateful');
  t.equal(dhcp6ModeOf('auto', link('other')), 'stateless');
  t.equal(dhcp6ModeOf('auto', link('none')), undefined, 'neither flag: no client');
  t.equal(dhcp6ModeOf('auto', link()), undefined, 'no advertisement yet: no client');
  t.equal(dhcp6ModeOf('stateless', link('managed')), 'stateless', 'an explicit mode stands');
  t.equal(dhcp6ModeOf('off', link('managed')), undefined);
  t.equal(dhcp6ModeOf('auto', link(), false), 'stateful', 'a link that takes no advertisements runs stateful');
});
