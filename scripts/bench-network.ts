// bench:network: the network plugin against the real kernel, in private network
// namespaces (needs root and dnsmasq), and one VM for what the host kernel lacks:
//   dhcp    time from a fresh start on an unconfigured link to its DHCP address applied
//   events  latency from a kernel link change (MTU), an address added, to the LinkStatus update
//   sntp    SNTP exchanges with chronyd on loopback
//   ipv6    link up -> SLAAC address and the router advertisement's default route (dnsmasq's RA);
//           DHCPv6 exchanges, stateful (Solicit to Reply) and stateless (Information-Request)
//   bond    in a VM on our kernel (the host has no bonding): the active port's link cut (QMP
//           set_link) -> the API answering through the other port, which it reports active
//   --runs N   runs of each timed exchange (default 5); --parts a,b   which of the above (default all)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../native/index.ts';
import { until } from '../cosi/conformance/converge.ts';
import { ControllerRuntime } from '../cosi/controller/runtime.ts';
import { newResource } from '../cosi/resource/resource.ts';
import { MemoryState } from '../cosi/state/memory-state.ts';
import { addressMergeController } from '../plugins/network/address-merge.ts';
import { addressSpecController } from '../plugins/network/address-spec.ts';
import { dhcpMergeController } from '../plugins/network/dhcp-merge.ts';
import { dhcpSpecController } from '../plugins/network/dhcp-spec.ts';
import { linkMergeController } from '../plugins/network/link-merge.ts';
import { linkSpecController } from '../plugins/network/link-spec.ts';
import { linkStatusController } from '../plugins/network/link-status.ts';
import { Rtnl } from '../plugins/network/rtnetlink/client.ts';
import { routeMergeController } from '../plugins/network/route-merge.ts';
import { routeSpecController } from '../plugins/network/route-spec.ts';
import { routeStatusController } from '../plugins/network/route-status.ts';
import { DNSMASQ, startDnsmasq } from '../plugins/network/testing/dnsmasq-netns.ts';
import { Dhcp6Client, type Dhcp6Mode } from '../plugins/network/dhcp6/client.ts';
import { udp6Transport } from '../plugins/network/dhcp6/udp6.ts';
import { querySntp } from '../plugins/time/sntp/client.ts';
import { bootApiMachine, TEST_CA_DOCUMENT } from '../qemu/api-machine.ts';
import { bondSeed } from '../qemu/config-seeds.ts';
import { benchArgs } from './lib/bench-args.ts';
import { startChronyd } from './lib/chronyd.ts';
import { OUT } from './lib/paths.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, DHCP_SPEC_TYPE, KERNEL_ROUTE_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS,
} from '../proto/gen/resource-types.ts';

const args = benchArgs(
  'usage: npm run bench:network -- [--runs N] [--parts dhcp,events,sntp,ipv6,bond]\n\n'
    + 'DHCP lease-to-address time, kernel-event-to-status latency (links, addresses) in private network namespaces '
    + '(root, dnsmasq),\nSNTP exchanges with chronyd on loopback, SLAAC and DHCPv6 against dnsmasq, and bond '
    + 'failover in a VM\n(npm run build first).\n',
);
const runs = args.int('--runs', 5);
const PARTS = ['dhcp', 'events', 'sntp', 'ipv6', 'bond'] as const;
const parts = new Set(args.list('--parts', PARTS, PARTS));
if (process.getuid?.() !== 0 || !DNSMASQ) {
  process.stderr.write('bench:network needs root and dnsmasq (npm run setup)\n');
  process.exit(2);
}

const n = native();
n.unshareNet();
execFileSync('ip', ['link', 'set', 'lo', 'up']); // chronyd serves on 127.0.0.1 in here
const ip = (...a: string[]) => execFileSync('ip', a);
startDnsmasq('cosi-bench', [{ local: 'bn0', peer: 'bn1', addresses: ['192.0.2.1/24'] }], [
  '--dhcp-range=192.0.2.50,192.0.2.99,255.255.255.0,2m', '--dhcp-option=option:router,192.0.2.1',
  '--dhcp-authoritative',
]);
await new Promise((r) => setTimeout(r, 500));

const rtnl = new Rtnl(n);
const quiet = () => ({ info: () => {}, warn: () => {}, error: () => {} });
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return {
    p50: s[Math.floor(s.length / 2)]!, p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!,
    min: s[0]!, max: s.at(-1)!,
  };
};

const report: string[] = [];
const figures: Record<string, unknown> = { runs };
const line = (what: string, figure: string) => report.push(`  ${what.padEnd(58)} ${figure}`);

if (parts.has('dhcp')) {
  const dhcp: number[] = [];
  for (let i = 0; i < runs; i++) {
    ip('addr', 'flush', 'dev', 'bn0');
    ip('link', 'set', 'bn0', 'down');
    const state = new MemoryState();
    // What a config would say for a veth: up, with DHCP (physical links get both from the default layer).
    await state.create(newResource({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'bn0' }, { up: true }));
    await state.create(newResource({ namespace: NETWORK_NS, type: DHCP_SPEC_TYPE, id: 'bn0' }, { enabled: true }));
    const rt = new ControllerRuntime(state, { log: quiet });
    const r = () => rtnl;
    for (const c of [
      linkStatusController(r), linkMergeController(), linkSpecController(r), dhcpMergeController(),
      dhcpSpecController(() => n, { retryMs: 1000 }),
      addressMergeController(), addressSpecController(r), routeMergeController(), routeSpecController(r),
    ]) rt.register(c);
    const t0 = performance.now();
    rt.start();
    const applied = async () => (await state.list({ namespace: NETWORK_NS, type: ADDRESS_SPEC_STATUS_TYPE }))
      .some((x) => x.metadata.id.startsWith('bn0/') && (x.spec as { state: string }).state === 'applied');
    const st = (await until(applied, true, 30_000)) ? 'applied' : 'none';
    if (st !== 'applied') throw new Error(`run ${i + 1}: no DHCP address in 30 s`);
    dhcp.push(performance.now() - t0);
    await rt.stop();
    process.stderr.write(`[bench] DHCP run ${i + 1}/${runs}: ${dhcp.at(-1)!.toFixed(0)} ms\n`);
  }
  const d = stats(dhcp);
  figures.dhcpMs = d;
  line('start on an unconfigured link -> DHCP address applied', `median ${d.p50.toFixed(0)} ms  min `
    + `${d.min.toFixed(0)}  max ${d.max.toFixed(0)}  (${runs} runs; includes veth carrier-up)`);
}

if (parts.has('events')) {
  // Kernel change -> LinkStatus: 100 MTU changes on a bridge, each waited for.
  rtnl.createLink({ name: 'bnbr', kind: 'bridge' });
  const idx = rtnl.links().find((l) => l.name === 'bnbr')!.index;
  const state = new MemoryState();
  const rt = new ControllerRuntime(state, { log: quiet });
  rt.register(linkStatusController(() => rtnl));
  rt.start();
  await until(
    async () => (await state.get({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'bnbr' })).metadata.id, 'bnbr',
  );
  const seen = new Map<number, number>();
  await state.watch({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'bnbr' }, {}, (events) => {
    for (const e of events) {
      const mtu = (e.resource.spec as { mtu?: number } | null)?.mtu;
      if (mtu && !seen.has(mtu)) seen.set(mtu, performance.now());
    }
  });
  const event: number[] = [];
  for (let i = 0; i < 100; i++) {
    const mtu = 1300 + i;
    const t0 = performance.now();
    rtnl.setLink(idx, { mtu });
    for (let w = 0; w < 200 && !seen.has(mtu); w++) await new Promise((r) => setTimeout(r, 1));
    if (!seen.has(mtu)) throw new Error(`MTU ${mtu} never reached LinkStatus`);
    event.push(seen.get(mtu)! - t0);
  }
  // Kernel address added -> LinkStatus lists it (address notifications).
  const addrSeen = new Map<string, number>();
  await state.watch({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'bnbr' }, {}, (events) => {
    for (const ev of events)
      for (const a of (ev.resource.spec as { addresses?: string[] } | null)?.addresses ?? [])
        if (!addrSeen.has(a)) addrSeen.set(a, performance.now());
  });
  const addrEvent: number[] = [];
  for (let i = 1; i <= 50; i++) {
    const a = `198.18.0.${i}`;
    const t0 = performance.now();
    rtnl.address('add', idx, a, 32);
    for (let w = 0; w < 200 && !addrSeen.has(`${a}/32`); w++) await new Promise((r) => setTimeout(r, 1));
    if (!addrSeen.has(`${a}/32`)) throw new Error(`${a}/32 never reached LinkStatus`);
    addrEvent.push(addrSeen.get(`${a}/32`)! - t0);
  }
  await rt.stop();
  const e = stats(event);
  const ae = stats(addrEvent);
  Object.assign(figures, { linkEventMs: e, addressEventMs: ae });
  line('kernel link change -> LinkStatus updated', `p50 ${e.p50.toFixed(2)} ms  p99 ${e.p99.toFixed(2)} ms  `
    + `max ${e.max.toFixed(2)} ms  (100 MTU changes, by RTNLGRP_LINK)`);
  line('kernel address added -> LinkStatus lists it', `p50 ${ae.p50.toFixed(2)} ms  p99 ${ae.p99.toFixed(2)} ms  `
    + `max ${ae.max.toFixed(2)} ms  (50 addresses, by RTNLGRP_IPV4_IFADDR)`);
}

if (parts.has('sntp')) {
  // SNTP: our client against chronyd on loopback (the network part of a clock sync).
  const chrony = await startChronyd();
  const sntpDelay: number[] = [];
  const sntpOffset: number[] = [];
  for (let i = 0; i < 50; i++) {
    const s = await querySntp(`127.0.0.1:${chrony.port}`, () => n.clockNow());
    sntpDelay.push(s.delayMs);
    sntpOffset.push(Math.abs(s.offsetMs));
  }
  await chrony.stop();
  const sd = stats(sntpDelay);
  const so = stats(sntpOffset);
  Object.assign(figures, { sntpDelayMs: sd, sntpAbsOffsetMs: so });
  line('SNTP exchange with chronyd on loopback', `delay p50 ${sd.p50.toFixed(3)} ms  p99 ${sd.p99.toFixed(3)} ms; `
    + `|offset| p50 ${so.p50.toFixed(3)} ms (same clock: the error)`);
}

if (parts.has('ipv6')) {
  // A second veth on a network of its own: dnsmasq advertises 2001:db8:6::/64 for SLAAC (with O) and answers
  // DHCPv6, stateful from a range on 2001:db8:7::/64 (a second address of its side) and stateless.
  const server6 = startDnsmasq('cosi-bench6', [
    { local: 'b6', peer: 'b61', addresses: ['2001:db8:6::1/64', '2001:db8:7::1/64'] },
  ], ['--enable-ra', '--dhcp-range=2001:db8:6::,ra-stateless,64', '--dhcp-range=2001:db8:7::100,2001:db8:7::1ff,64,2m',
    '--dhcp-option=option6:dns-server,[2001:db8::53]']);
  await new Promise((r) => setTimeout(r, 500));
  const slaac: number[] = [];
  const raRoute: number[] = [];
  for (let i = 0; i < runs; i++) {
    ip('link', 'set', 'b6', 'down'); // the kernel drops its SLAAC address and RA route with the link
    const state = new MemoryState();
    await state.create(newResource({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id: 'b6' }, { up: true }));
    const rt = new ControllerRuntime(state, { log: quiet });
    const r = () => rtnl;
    for (const c of [linkStatusController(r), linkMergeController(), linkSpecController(r), routeStatusController(r)]) {
      rt.register(c);
    }
    const t0 = performance.now();
    rt.start();
    let addressAt = 0;
    let routeAt = 0;
    await until(async () => {
      const link = await state.get({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: 'b6' }).catch(() => null);
      const addresses = (link?.spec as { addresses?: string[] } | undefined)?.addresses ?? [];
      if (!addressAt && addresses.some((a) => a.startsWith('2001:db8:6:'))) addressAt = performance.now() - t0;
      const routes = await state.list({ namespace: NETWORK_NS, type: KERNEL_ROUTE_TYPE });
      if (!routeAt && routes.some((x) => x.metadata.id === '::/0/1024/b6')) routeAt = performance.now() - t0;
      return addressAt > 0 && routeAt > 0;
    }, true, 30_000);
    await rt.stop();
    if (!addressAt || !routeAt) throw new Error(`SLAAC run ${i + 1}: no address or default route in 30 s`);
    slaac.push(addressAt);
    raRoute.push(routeAt);
    process.stderr.write(`[bench] SLAAC run ${i + 1}/${runs}: address ${addressAt.toFixed(0)} ms, `
      + `route ${routeAt.toFixed(0)} ms\n`);
  }
  // DHCPv6 exchanges on the link as it is now (up, its link-local address usable): start -> lease or options.
  const mac = rtnl.links().find((l) => l.name === 'b6')!.mac!;
  const transport = udp6Transport({ warn: (m) => process.stderr.write(`[bench] ${m}\n`) });
  const exchange = async (mode: Dhcp6Mode): Promise<number> => {
    let done = 0;
    const t0 = performance.now();
    const client = new Dhcp6Client({
      transport, link: 'b6', mac, mode, log: { info: () => {}, warn: () => {} },
      onChange: () => { done ||= performance.now() - t0; },
    });
    client.start();
    await until(() => done > 0, true, 30_000);
    client.stop(true);
    if (!done) throw new Error(`DHCPv6 ${mode}: no answer in 30 s`);
    return done;
  };
  const stateful: number[] = [];
  const stateless: number[] = [];
  for (let i = 0; i < runs; i++) {
    stateful.push(await exchange('stateful'));
    stateless.push(await exchange('stateless'));
  }
  server6.stop();
  const [a, rr, sf, sl] = [stats(slaac), stats(raRoute), stats(stateful), stats(stateless)];
  Object.assign(figures, { slaacAddressMs: a, raDefaultRouteMs: rr, dhcp6StatefulMs: sf, dhcp6StatelessMs: sl });
  line('link up -> SLAAC address in LinkStatus', `median ${a.p50.toFixed(0)} ms  min ${a.min.toFixed(0)}  max `
    + `${a.max.toFixed(0)}  (${runs} runs; the link-local's DAD, RS, RA)`);
  line('link up -> the RA\'s default route as a KernelRoute', `median ${rr.p50.toFixed(0)} ms  min `
    + `${rr.min.toFixed(0)}  max ${rr.max.toFixed(0)}`);
  line('DHCPv6 stateful: Solicit -> Reply (address leased)', `median ${sf.p50.toFixed(1)} ms  min `
    + `${sf.min.toFixed(1)}  `
    + `max ${sf.max.toFixed(1)}  (${runs} runs)`);
  line('DHCPv6 stateless: Information-Request -> Reply', `median ${sl.p50.toFixed(1)} ms  min ${sl.min.toFixed(1)}  `
    + `max ${sl.max.toFixed(1)}`);
}

if (parts.has('bond')) {
  // The host kernel has no bonding: one VM on ours, bonded active-backup over a QEMU hub from a NoCloud seed.
  const dir = mkdtempSync(join(tmpdir(), 'bench-bond-'));
  process.stderr.write('[bench] booting a VM with a bond (TCG: about a minute)\n');
  const seed = bondSeed(dir, TEST_CA_DOCUMENT());
  const vm = await bootApiMachine({ hubNics: 2, disks: [{ file: seed, interface: 'cdrom' }] }, 'dhcp',
    { secrets: 'none' });
  try {
    await vm.poll(['get', 'linkstatus', 'bond0', '-o', 'yaml'], /bondActive: eth0/, 120_000);
    const q = await vm.vm.qmp();
    const active = async (port: string) => (await vm.run(['get', 'linkstatus', 'bond0', '-o', 'yaml'], undefined,
      5000)).out.includes(`bondActive: ${port}`);
    const roundTrip: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await active('eth0');
      roundTrip.push(performance.now() - t0);
    }
    const failover: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await q.execute('set_link', { name: 'nic0', up: false });
      while (!(await active('eth1'))) {
        if (performance.now() - t0 > 30_000) throw new Error(`failover run ${i + 1}: eth1 not active in 30 s`);
      }
      failover.push(performance.now() - t0);
      await q.execute('set_link', { name: 'nic0', up: true });
      await vm.poll(['get', 'linkstatus', 'bond0', '-o', 'yaml'], /bondActive: eth0/, 30_000);
      process.stderr.write(`[bench] bond failover run ${i + 1}/${runs}: ${failover.at(-1)!.toFixed(0)} ms\n`);
    }
    const [f, rt] = [stats(failover), stats(roundTrip)];
    Object.assign(figures, { bondFailoverMs: f, apiRoundTripMs: rt });
    line('bond port link down -> API answers via the other port', `median ${f.p50.toFixed(0)} ms  min `
      + `${f.min.toFixed(0)}  max ${f.max.toFixed(0)}  (TCG VM, miimon 100; one API call of it: `
      + `${rt.p50.toFixed(0)} ms)`);
  } finally {
    vm.vm.kill();
  }
}

writeFileSync(join(OUT, 'bench-network.json'), JSON.stringify(figures, null, 2) + '\n');
process.stdout.write(`
network benchmark (real kernel, private namespaces, dnsmasq over veth; bond in a VM on our kernel)
${report.join('\n')}
figures saved to out/bench-network.json
`);
process.exit(0);
