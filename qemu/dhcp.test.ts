// Whole-system DHCP: no ip= on the command line, so the guest is reachable only if
// the network plugin's DHCP client got a lease from QEMU's user network.
import t from 'tap';
import { bootWithApi } from './api-vm.ts';
import { IMAGE_PLUGINS } from './api-machine.ts';

// QEMU's DHCP server names its router and DNS server only when the guest may reach the host.
const { vm, run, poll, awaitPlugins } = await bootWithApi({ hostAccess: true }, 'dhcp');
t.teardown(() => vm.kill());

t.test('eth0 gets 10.0.2.15/24, a default route via 10.0.2.2 and resolver 10.0.2.3 by DHCP', async (t) => {
  const lease = JSON.parse(
    (await poll(['get', 'leases', 'eth0', '-o', 'json'], /bound/)).out,
  ) as { spec: Record<string, unknown> };
  t.match(lease.spec, {
    state: 'bound', address: '10.0.2.15/24', gateway: '10.0.2.2', server: '10.0.2.2', dns: ['10.0.2.3'],
  });
  t.match(
    (await poll(['get', 'addressspecstatus', 'eth0/10.0.2.15/24'], /applied/)).out,
    /10\.0\.2\.15\/24\s+eth0\s+applied\s+dhcp/,
  );
  t.match(
    (await poll(['get', 'routespecstatus', '0.0.0.0/0/1024'], /applied/)).out,
    /0\.0\.0\.0\/0\s+10\.0\.2\.2\s+eth0\s+applied\s+dhcp/,
  );
  t.match(
    (await poll(['get', 'resolverspecstatus', 'resolvers', '-o', 'yaml'], /10\.0\.2\.3/)).out,
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

t.test('IPv6 on QEMU\'s user network: SLAAC, the advertisement\'s default route, stateless DHCPv6', async (t) => {
  // QEMU answers DHCPv6 Information-Requests (only when the guest may reach the host, as here) and advertises
  // fec0::/64 with M and O clear: the default auto mode runs no client until a spec asks for stateless.
  const link = (await poll(['get', 'links', 'eth0', '-o', 'yaml'], /ipv6Router: none/, 60_000)).out;
  t.match(link, /- fec0::[0-9a-f:]+\/64/, 'a SLAAC address');
  t.match((await poll(['get', 'kernelroute'], /::\/0\s+fe80::2\s+eth0/, 30_000)).out,
    /::\/0\s+fe80::2\s+eth0\s+\d+\s+ra\b/, 'the default route from the advertisement');
  t.match((await run(['get', 'dhcp6lease', 'eth0', '-o', 'yaml'])).out, /state: waiting[\s\S]*mode: auto/,
    'auto: no client while the advertisement asks for none');
  const applied = await run(['apply', '-f', '-'],
    'metadata: {type: dhcpspec, id: v6-stateless}\nspec: {link: eth0, ipv6: stateless}\n');
  t.equal(applied.code, 0, applied.err);
  const lease = (await poll(['get', 'dhcp6lease', 'eth0', '-o', 'yaml'], /state: informed/, 30_000)).out;
  t.match(lease, /state: informed/, 'QEMU answered the Information-Request');
  t.match(lease, /dns:\n\s+- fec0::3/, 'with its DNS server');
  t.match((await poll(['get', 'resolverspec'], /dhcp6\/eth0/, 30_000)).out, /dhcp6\/eth0\s.*fec0::3/,
    'a ResolverSpec at the dhcp layer (DHCPv4\'s, a lower id, stays the one in effect)');
  t.equal((await run(['delete', 'dhcpspec', 'v6-stateless'])).code, 0);
  t.match((await poll(['get', 'dhcp6lease', 'eth0', '-o', 'yaml'], /state: waiting/, 30_000)).out, /state: waiting/,
    'back to auto when the spec goes');
});

t.test('in 256 MiB with every plugin running, three dozen resources apply and the OOM killer ends nothing',
  async (t) => {
    // A kill shows three ways: the kernel counts it (MachineOverview.oomKills, from /proc/vmstat), says so on
    // the console (printed even when quiet), and the plugin it hit restarts.
    const oomLine = /Out of memory: Killed process/;
    const memory = async () => JSON.parse((await run(['memory', '-o', 'json'])).out) as {
      memoryTotalKib: number; memoryAvailableKib: number; oomKills?: number;
    };
    /** What CI's summary, which keeps only assertions' names, needs to tell a stall from a lost event. */
    async function whyNot(addresses: string[]): Promise<string> {
      const net = JSON.parse((await run(['get', 'plugins', 'network', '-o', 'json'])).out || '{}') as {
        spec?: { state: string; restarts: number };
      };
      const statuses = (await run(['get', 'addressspecstatus', '-o', 'yaml'])).out;
      const m = await memory();
      return `missing ${addresses.join(' ')}; network plugin ${net.spec?.state} restarts ${net.spec?.restarts}; `
        + `${(statuses.match(/state: applied/g) ?? []).length} AddressSpecStatus applied; `
        + `available ${(m.memoryAvailableKib / 1024).toFixed(0)} MiB; oom kills ${m.oomKills}`;
    }
    // Every plugin up first: the load is three dozen resources on a machine that has started, not its start.
    await awaitPlugins(IMAGE_PLUGINS);
    const before = await memory();
    t.ok(before.memoryTotalKib < 256 * 1024 && before.memoryTotalKib > 200 * 1024,
      `a 256 MiB machine (MemTotal ${before.memoryTotalKib} KiB)`);
    t.equal(before.oomKills, 0, 'no OOM kill before (and the kernel counts them)');
    const sysctls = ['accept_local', 'arp_filter', 'arp_ignore', 'arp_announce', 'log_martians', 'proxy_arp',
      'rp_filter', 'send_redirects', 'shared_media', 'secure_redirects', 'bootp_relay', 'disable_policy']
      .map((k) => `net.ipv4.conf.lo.${k}`);
    const docs = [
      ...Array.from({ length: 12 }, (_, i) => ['addressspec', `load-${i}`,
        `{address: 127.0.10.${i + 1}/32, link: lo}`]),
      ...Array.from({ length: 12 }, (_, i) => ['routespec', `load-${i}`,
        `{destination: 198.51.100.${i * 4}/30, gateway: 10.0.2.2, link: eth0}`]),
      ...sysctls.map((key) => ['sysctl', key, '{value: "1"}']),
    ];
    const applied = await run(['apply', '-f', '-'],
      docs.map(([type, id, spec]) => `metadata: {type: ${type}, id: ${id}}\nspec: ${spec}\n`).join('---\n'));
    t.equal(applied.code, 0, `${docs.length} resources applied: ${applied.err}`);
    // Done for real: loopback carries the addresses (as the kernel reports them), the kernel took each route,
    // each sysctl reads back.
    const wanted = Array.from({ length: 12 }, (_, i) => `127.0.10.${i + 1}/32`);
    const lo = (await poll(['get', 'links', 'lo', '-o', 'yaml'], new RegExp(wanted.map((a) => `(?=[\\s\\S]*${
      a.replace(/\./g, '\\.')})`).join('')), 60_000)).out;
    const missing = wanted.filter((a) => !lo.includes(a));
    t.same(missing, [], `every address on lo${missing.length ? ` (${await whyNot(missing)})` : ''}`);
    for (let i = 0; i < 12; i++) {
      t.match((await poll(['get', 'routespecstatus', `198.51.100.${i * 4}/30/1024`], /applied/)).out,
        /applied/, `route 198.51.100.${i * 4}/30 in the kernel`);
    }
    for (const key of sysctls) {
      t.match((await poll(['get', 'kernelparamspecstatus', key, '-o', 'yaml'], /state: applied/)).out,
        /state: applied[\s\S]*value: "?1"?/, `${key} = 1`);
    }
    const after = await memory();
    t.equal(after.oomKills, 0, 'the OOM killer ended nothing');
    t.notMatch(vm.console(), oomLine, 'nor did the kernel say so on the console');
    for (const name of IMAGE_PLUGINS) {
      const { state, restarts } = (JSON.parse((await run(['get', 'plugins', name, '-o', 'json'])).out) as {
        spec: { state: string; restarts: number };
      }).spec;
      t.same({ state, restarts }, { state: 'running', restarts: 0 }, `${name} runs, never restarted`);
    }
    t.comment(`used ${((after.memoryTotalKib - after.memoryAvailableKib) / 1024).toFixed(1)} MiB of `
      + `${(after.memoryTotalKib / 1024).toFixed(1)} MiB with ${docs.length} more resources`);
  });

t.test('power-off releases the lease and ends cleanly', async (t) => {
  const exit = await vm.powerdown(60_000);
  t.ok(exit.clean);
  t.equal(exit.code, 0);
});
