// bench:network: the network plugin against the real kernel, in private network
// namespaces (needs root and dnsmasq):
//   - time from a fresh start on an unconfigured link to its DHCP address applied
//   - latency from a kernel link change (MTU) to the LinkStatus update, by notification
//   --runs N   DHCP runs (default 5); 100 link changes
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
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
import { querySntp } from '../plugins/time/sntp/client.ts';
import { benchArgs } from './lib/bench-args.ts';
import { startChronyd } from './lib/chronyd.ts';
import { OUT } from './lib/paths.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, DHCP_SPEC_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS,
} from '../proto/gen/resource-types.ts';

const args = benchArgs(
  'usage: npm run bench:network -- [--runs N]\n\n'
    + 'DHCP lease-to-address time, kernel-event-to-status latency (links, addresses) in private network namespaces '
    + '(root, dnsmasq),\nand SNTP exchanges with chronyd on loopback.\n',
);
const runs = args.int('--runs', 5);
const dnsmasq = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'].find(existsSync);
if (process.getuid?.() !== 0 || !dnsmasq) {
  process.stderr.write('bench:network needs root and dnsmasq (npm run setup)\n');
  process.exit(2);
}

const n = native();
n.unshareNet();
execFileSync('ip', ['link', 'set', 'lo', 'up']); // chronyd serves on 127.0.0.1 in here
const serverNs = `cosi-bench-${process.pid}`;
const ip = (...a: string[]) => execFileSync('ip', a);
ip('netns', 'add', serverNs);
process.on('exit', () => {
  if (existsSync(`/run/netns/${serverNs}`)) execFileSync('ip', ['netns', 'del', serverNs], { stdio: 'ignore' });
});
ip('link', 'add', 'bn0', 'type', 'veth', 'peer', 'name', 'bn1');
ip('link', 'set', 'bn1', 'netns', serverNs);
ip('-n', serverNs, 'addr', 'add', '192.0.2.1/24', 'dev', 'bn1');
ip('-n', serverNs, 'link', 'set', 'bn1', 'up');
const server = spawn('ip', [
  'netns', 'exec', serverNs, dnsmasq, '--no-daemon', '--conf-file=/dev/null', '--port=0', '--interface=bn1',
  '--bind-interfaces', '--leasefile-ro', '--dhcp-range=192.0.2.50,192.0.2.99,255.255.255.0,2m',
  '--dhcp-option=option:router,192.0.2.1', '--dhcp-authoritative',
], { stdio: 'ignore' });
process.on('exit', () => server.kill());
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

const d = stats(dhcp);
const e = stats(event);
const ae = stats(addrEvent);
const sd = stats(sntpDelay);
const so = stats(sntpOffset);
writeFileSync(join(OUT, 'bench-network.json'), JSON.stringify({
  dhcpMs: d, linkEventMs: e, addressEventMs: ae, sntpDelayMs: sd, sntpAbsOffsetMs: so, runs,
}, null, 2) + '\n');
process.stdout.write(`
network benchmark (real kernel, private namespaces, dnsmasq over veth)
  start on an unconfigured link -> DHCP address applied   median ${d.p50.toFixed(0)} ms  min ${d.min.toFixed(0)}  `
  + `max ${d.max.toFixed(0)}  (${runs} runs; includes veth carrier-up)
  kernel link change -> LinkStatus updated               p50 ${e.p50.toFixed(2)} ms  p99 ${e.p99.toFixed(2)} ms  `
  + `max ${e.max.toFixed(2)} ms  (100 MTU changes, by RTNLGRP_LINK)
  kernel address added -> LinkStatus lists it            p50 ${ae.p50.toFixed(2)} ms  p99 ${ae.p99.toFixed(2)} ms  `
  + `max ${ae.max.toFixed(2)} ms  (50 addresses, by RTNLGRP_IPV4_IFADDR)
  SNTP exchange with chronyd on loopback                 delay p50 ${sd.p50.toFixed(3)} ms  `
  + `p99 ${sd.p99.toFixed(3)} ms; |offset| p50 ${so.p50.toFixed(3)} ms (same clock: the error)
figures saved to out/bench-network.json
`);
process.exit(0);
