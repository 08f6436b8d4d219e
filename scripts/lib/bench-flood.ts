// bench-flood: `npm run bench:state -- --flood [--vm]`: a bystander's List and Get while one reader opens thousands
// of watches at once (cosi/conformance/watch-flood.ts), against the engine on this host (`appliance serve`) or a
// TCG VM booted from the built artifacts, where the engine shares one emulated CPU with everything else.
import { readFileSync } from 'node:fs';
import { RemoteState } from '../../cosi/remote/client.ts';
import type { ChannelTls } from '../../cosi/remote/grpc/client.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { measureWatchFlood, type FloodResult } from '../../cosi/conformance/watch-flood.ts';
import { startServe } from '../../init/engine/serve-harness.ts';
import { bootApiMachine } from '../../qemu/api-machine.ts';
import { build } from '../build.ts';
import { percentile } from './stats.ts';
import { MOTD_TYPE } from '../../proto/gen/resource-types.ts';

interface Target {
  address: string; tls: (role: 'admin' | 'reader') => ChannelTls; rssMiB(): number | undefined; stop(): Promise<void>;
}

async function target(vm: boolean): Promise<Target> {
  if (vm) {
    const m = await bootApiMachine({}, 'dhcp');
    return { address: m.endpoint, tls: m.tls, rssMiB: () => undefined, stop: async () => {
      m.vm.kill();
    } };
  }
  const { exe } = await build({ hostOnly: true });
  const served = await startServe(exe, ['--no-plugins']);
  const status = () => readFileSync(`/proc/${served.process.pid}/status`, 'utf8');
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(status())![1]) / 1024;
  return { address: `127.0.0.1:${served.port}`, tls: served.tls, rssMiB: rss, stop: () => served.stop() };
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

export async function benchWatchFlood(o: { watches: number; resources: number; vm: boolean }): Promise<void> {
  const t = await target(o.vm);
  const admin = new RemoteState(t.address, { tls: t.tls('admin') });
  const kind = { namespace: 'config', type: MOTD_TYPE };
  for (let i = 0; i < o.resources; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, o.resources - i) }, (_, j) =>
      admin.create(newResource({ ...kind, id: `f${String(i + j).padStart(5, '0')}` }, { text: `flood ${i + j}` }))));
  }
  const rssBefore = t.rssMiB();
  const run = (call: 'get' | 'list') => measureWatchFlood({
    address: t.address, tls: t.tls('reader'), kind, bystanderReads: { ...kind, id: 'f00000' }, watches: o.watches,
    bystanderCall: call, bystanderTimeoutMs: 30_000,
  });
  const lists = await run('list');
  const gets = await run('get');
  const rssAfter = t.rssMiB();
  admin.close();
  await t.stop();
  const line = (what: string, r: FloodResult) => {
    const failed = r.floodErrors.length ? `; flood errors: ${r.floodErrors.join('; ')}` : '';
    return `  ${what.padEnd(28)} p50 ${ms(percentile(r.latencies, 50))}   p99 ${ms(percentile(r.latencies, 99))}   `
      + `max ${ms(Math.max(...r.latencies))}   (${r.latencies.length} calls, ${r.bystanderErrors.length} failed; `
      + `${r.opened}/${o.watches} watches bootstrapped in ${(r.bootstrappedMs / 1000).toFixed(2)} s${failed})`;
  };
  process.stdout.write(`
watch flood against ${o.vm ? 'a TCG VM (1 vCPU, 256 MiB, the API through QEMU\'s user network)'
    : 'the engine on this host (appliance serve, loopback)'}, mutual TLS:
  one reader opens ${o.watches} watches of a kind of ${o.resources} resources at once, over 12 connections;
  a bystander on its own connection and thread calls every 20 ms
${line(`bystander List of ${o.resources}`, lists)}
${line('bystander Get', gets)}
  target: bystander p99 <= 100 ms${rssBefore !== undefined ? `
  engine RSS ${rssBefore.toFixed(1)} MiB before, ${rssAfter!.toFixed(1)} MiB after the floods` : ''}
`);
}
