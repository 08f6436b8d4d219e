// Whole-system DHCP: no ip= on the command line, so the guest is reachable only if
// the network plugin's DHCP client got a lease from QEMU's user network.
import t from 'tap';
import { bootWithApi } from './api-vm.ts';

// QEMU's DHCP server names its router and DNS server only when the guest may reach the host.
const { vm, run, poll } = await bootWithApi({ hostAccess: true }, 'dhcp');
t.teardown(() => vm.kill());

t.test('eth0 gets 10.0.2.15/24, a default route via 10.0.2.2 and resolver 10.0.2.3 by DHCP', async (t) => {
  const lease = JSON.parse(
    (await poll(['get', 'leases', 'eth0', '-o', 'json'], /bound/)).out,
  ) as { spec: Record<string, unknown> };
  t.match(lease.spec, {
    state: 'bound', address: '10.0.2.15/24', gateway: '10.0.2.2', server: '10.0.2.2', dns: ['10.0.2.3'],
  });
  t.match(
    (await poll(['get', 'addressstatus', 'eth0/10.0.2.15/24'], /applied/)).out,
    /10\.0\.2\.15\/24\s+eth0\s+applied\s+dhcp/,
  );
  t.match(
    (await poll(['get', 'routestatus', '0.0.0.0/0/1024'], /applied/)).out,
    /0\.0\.0\.0\/0\s+10\.0\.2\.2\s+eth0\s+applied\s+dhcp/,
  );
  t.match(
    (await poll(['get', 'resolverstatus', 'resolvers', '-o', 'yaml'], /10\.0\.2\.3/)).out,
    /servers:\n\s+- 10\.0\.2\.3[\s\S]*layer: dhcp/,
  );
  const link = JSON.parse(
    (await poll(['get', 'links', 'eth0', '-o', 'json'], /fe80::/)).out,
  ) as { spec: { addresses: string[] } };
  t.ok(link.spec.addresses.includes('10.0.2.15/24'), 'LinkStatus lists the DHCP address');
  t.ok(
    link.spec.addresses.some((a) => /^fe80::[0-9a-f:]+\/64$/.test(a)),
    `IPv6 link-local came up with the link: ${link.spec.addresses.join(', ')}`,
  );
  const bound = /\[init ([\d.]+)\] engine\/plugin\/network: .*eth0: bound 10\.0\.2\.15/.exec(vm.console());
  t.ok(bound, 'the plugin logged the lease');
});

t.test('power-off releases the lease and ends cleanly', async (t) => {
  const exit = await vm.powerdown(60_000);
  t.ok(exit.clean);
  t.equal(exit.code, 0);
});
