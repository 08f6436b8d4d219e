// bench:state: the COSI API's speed on this host, against the built engine
// (`appliance serve`) over gRPC on loopback, with the ordinary client (specs as
// protobuf, as plugins and cosictl read them) and a YAML-only one; and the cost of a
// spec in each encoding.
//   --resources N   resources for List and RSS (default 10000)
//   --watchers N    concurrent kind watchers (default 100)
//   --watch-threads N  client threads the watchers are spread over (default 2)
//   --flood         instead: one reader opens --flood-watches (3000) watches of a kind of --flood-resources (100)
//                   at once while a bystander Lists that kind and another Gets, each every 20 ms on its own thread;
//                   with --vm against a TCG VM booted from out/ (npm run build), else against `appliance serve`
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import type { RemoteState } from '../cosi/remote/client.ts';
import { yamlText } from '../cosi/spec/yaml-text.ts';
import { builtinCodecs } from '../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../plugins/index.ts';
import { newResource, type Resource } from '../cosi/resource/resource.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import { build } from './build.ts';
import { OUT } from './lib/paths.ts';
import { benchArgs } from './lib/bench-args.ts';
import { grpcEchoFloor, type FloorTls } from './lib/grpc-floor.ts';
import type { MachineSecrets } from '../machinery/pki/secrets.ts';
import { createPublicKey, createPrivateKey } from 'node:crypto';
import { generateKey, issueCertificate, keyToPem } from '../machinery/pki/certificate.ts';
import { measureWatchDelivery } from './lib/watch-delivery.ts';
import { benchWatchFlood } from './lib/bench-flood.ts';
import { percentile } from './lib/stats.ts';
import { LINK_STATUS_TYPE, MOTD_TYPE } from '../proto/gen/resource-types.ts';

const args = benchArgs(
  'usage: npm run bench:state -- [--resources N] [--watchers N] [--watch-threads N]\n'
    + '       npm run bench:state -- --flood [--vm] [--flood-watches N] [--flood-resources N]\n\n'
    + 'Measures Get/Update latency, List of N resources, watch delivery with N watchers, and RSS.\n'
    + 'With --flood: how long a bystander\'s List and Get wait while one reader opens thousands of watches at once\n'
    + '(--vm: on a TCG VM booted from out/, instead of the engine on this host).\n',
);
const N = args.int('--resources', 10_000);
const WATCHERS = args.int('--watchers', 100);
const WATCH_THREADS = args.int('--watch-threads', 2);

/** A server certificate for the floor's echo server from the run's CA, and the admin client's. */
function floorTls(s: MachineSecrets): FloorTls {
  const key = generateKey();
  const serverCert = issueCertificate({
    subject: { commonName: 'localhost' }, publicKey: createPublicKey(key),
    issuer: { certificate: s.ca.certificate, key: createPrivateKey(s.ca.key) }, usage: 'server',
    notBefore: new Date(0), notAfter: new Date(Date.now() + 86_400_000), names: ['localhost'],
  });
  return {
    ca: s.ca.certificate, serverCert, serverKey: keyToPem(key),
    clientCert: s.clients.admin.certificate, clientKey: s.clients.admin.key,
  };
}

const ms = (x: number) => `${x.toFixed(3)} ms`;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

if (process.argv.includes('--flood')) {
  await benchWatchFlood({
    watches: args.int('--flood-watches', 3000), resources: args.int('--flood-resources', 100),
    vm: process.argv.includes('--vm'),
  });
  process.exit(0);
}

const { exe } = await build({ hostOnly: true });
const served = await startServe(exe, ['--no-plugins']); // the engine alone: no plugin reacting to the writes
const address = `127.0.0.1:${served.port}`;
const floor = await grpcEchoFloor(floorTls(served.secrets));
const codecs = builtinCodecs(builtinTypes());
const client = served.client('admin', { codecs });
await client.waitReady();
const ptr = (id: string) => ({ namespace: 'config', type: MOTD_TYPE, id });
const rssStart = rssMiB(served.process.pid!);


// Get and Update latency, sequential, after a warm-up.
let r: Resource = await client.create(newResource(ptr('bench'), { text: 'bench 0' }));
for (let i = 0; i < 300; i++) await client.get(ptr('bench'));
const gets: number[] = [];
for (let i = 0; i < 3000; i++) {
  const t0 = performance.now();
  await client.get(ptr('bench'));
  gets.push(performance.now() - t0);
}
const updates: number[] = [];
for (let i = 0; i < 2000; i++) {
  const t0 = performance.now();
  r = await client.update({ ...r, spec: { text: `bench ${i + 1}` } });
  updates.push(performance.now() - t0);
}

// N resources, then List them.
process.stderr.write(`[bench] creating ${N} resources\n`);
const tc = performance.now();
const batch = 64;
for (let i = 0; i < N; i += batch) {
  await Promise.all(Array.from(
    { length: Math.min(batch, N - i) },
    (_, j) => client.create(newResource(ptr(`r${String(i + j).padStart(6, '0')}`), { text: `resource ${i + j}` })),
  ));
}
const createRate = N / ((performance.now() - tc) / 1000);
const listWith = async (c: RemoteState) => {
  const xs: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const all = await c.list({ namespace: 'config', type: MOTD_TYPE });
    if (all.length !== N + 1) throw new Error(`listed ${all.length}, expected ${N + 1}`);
    if (typeof (all[N]!.spec as { text?: unknown }).text !== 'string') throw new Error('a listed spec did not decode');
    xs.push(performance.now() - t0);
  }
  return xs.slice(2); // the first runs warm up both processes
};
const lists = await listWith(client);
const yamlClient = served.client('admin');
const yamlLists = await listWith(yamlClient);
yamlClient.close();
const rssFull = rssMiB(served.process.pid!);

// Watch delivery: WATCHERS kind watchers, 300 updates; spread over client threads (as
// watchers are spread over processes on a machine), and all in one thread for contrast;
// the updates come from a thread of their own, as a writer is its own process.
await client.create(newResource(ptr('watched'), { text: 'start' }));
const watchRun = (threads: number) => measureWatchDelivery({
  address, tls: served.tls('admin'), kind: { namespace: 'config', type: MOTD_TYPE }, watchers: WATCHERS, threads,
  connections: Math.max(1, Math.round(10 / threads)), updates: 300, id: 'watched', specField: 'text',
});
const spread = await watchRun(WATCH_THREADS);
const oneThread = await watchRun(1);
// The watch figure is taken with 5 ms of idle between updates, so that each event's fan-out ends before the
// next; every process then sleeps, and waking them costs this host far more than a hot call. This is the
// same wake-up cost for a Get alone: the floor under which no event can arrive.
const idleGets: number[] = [];
for (let i = 0; i < 300; i++) {
  await new Promise((r) => setTimeout(r, 5));
  const t0 = performance.now();
  await client.get(ptr('bench'));
  idleGets.push(performance.now() - t0);
}

// A new client's first call: TCP, the TLS handshake with both certificates, HTTP/2, one Get.
const handshakes: number[] = [];
for (let i = 0; i < 60; i++) {
  const t0 = performance.now();
  const fresh = served.client('admin', { codecs });
  await fresh.get(ptr('bench'));
  handshakes.push(performance.now() - t0);
  fresh.close();
}
handshakes.splice(0, 10); // warm-up
client.close();
await served.stop();

// A spec in each encoding: 10,000 LinkStatus specs (the richest status a machine has many of).
const linkCodec = codecs.get(LINK_STATUS_TYPE)!;
const links = Array.from({ length: N }, (_, i) => linkCodec.normalize({
  index: i + 1, type: 'ether', kind: i % 3 ? 'veth' : undefined, up: i % 2 === 0, operState: 'up', mtu: 1500,
  mac: `52:54:00:12:${(i >> 8 & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
  carrier: true, addresses: [`10.${i >> 8 & 255}.${i & 255}.1/24`, `fe80::5054:ff:fe12:${i.toString(16)}/64`],
}));
const timed = <T>(fn: () => T): [T, number] => {
  const t0 = performance.now();
  const r = fn();
  return [r, performance.now() - t0];
};
const [protoBytes, protoEncodeMs] = timed(() => links.map((l) => linkCodec.toProto(l)!));
const [, protoDecodeMs] = timed(() => protoBytes.map((b) => linkCodec.fromProto(b)));
const [yamlTexts, yamlEncodeMs] = timed(() => links.map((l) => linkCodec.toYaml(l)));
const [, yamlDecodeMs] = timed(() => yamlTexts.map((y) => YAML.parse(y)));
const encoding = {
  protoBytes: protoBytes.reduce((n, b) => n + b.length, 0),
  yamlBytes: yamlTexts.reduce((n, y) => n + Buffer.byteLength(y), 0),
  protoEncodeMs, protoDecodeMs, yamlEncodeMs, yamlDecodeMs,
};

const result = {
  getP50: percentile(gets, 50), getP99: percentile(gets, 99),
  updateP50: percentile(updates, 50), updateP99: percentile(updates, 99),
  listMs: percentile(lists, 50), listYamlMs: percentile(yamlLists, 50), resources: N,
  createPerSecond: Math.round(createRate),
  encoding, watchers: WATCHERS, watchThreads: WATCH_THREADS, watchExpected: spread.expected,
  watchEvents: spread.latenciesMs.length,
  watchP50: percentile(spread.latenciesMs, 50), watchP99: percentile(spread.latenciesMs, 99),
  watchOneThreadEvents: oneThread.latenciesMs.length,
  watchOneThreadP50: percentile(oneThread.latenciesMs, 50), watchOneThreadP99: percentile(oneThread.latenciesMs, 99),
  idleGetP50: percentile(idleGets, 50), idleGetP99: percentile(idleGets, 99),
  rssStartMiB: rssStart, rssMiB: rssFull, grpcEchoFloorP50: floor.p50, grpcEchoFloorP99: floor.p99,
  handshakeGetP50: percentile(handshakes, 50), handshakeGetP99: percentile(handshakes, 99),
};
writeFileSync(join(OUT, 'bench-state.json'), JSON.stringify(result, null, 2) + '\n');
process.stdout.write(`
state benchmark (engine over gRPC with mutual TLS on loopback, our client; specs as protobuf unless said)
  transport floor (bare grpc-js echo over mTLS, one process, now)  p50 ${ms(floor.p50)}   p99 ${ms(floor.p99)}
  new client: handshake + first Get p50 ${ms(result.handshakeGetP50)}   p99 ${ms(result.handshakeGetP99)}
  Get latency                  p50 ${ms(result.getP50)}   p99 ${ms(result.getP99)}   `
  + `(${(result.getP50 / floor.p50).toFixed(2)}x the floor; target <= 1.1x)
  Update latency               p50 ${ms(result.updateP50)}   p99 ${ms(result.updateP99)}
  List of ${N} resources     ${ms(result.listMs)} (median of 5; target <= 100 ms)   `
  + `YAML-only client ${ms(result.listYamlMs)} (specs parsed on read)
  create throughput            ${result.createPerSecond}/s (64 in flight)
  watch delivery, ${WATCHERS} watchers  p50 ${ms(result.watchP50)}   p99 ${ms(result.watchP99)}   `
  + `(${result.watchEvents}/${spread.expected} events, ${WATCH_THREADS} client threads; target p99 <= 5 ms)
                   in one thread  p50 ${ms(result.watchOneThreadP50)}   p99 ${ms(result.watchOneThreadP99)}   `
  + `(${result.watchOneThreadEvents}/${oneThread.expected} events, all watchers in one client thread)
    its floor: a Get after the same 5 ms idle  p50 ${ms(result.idleGetP50)}   p99 ${ms(result.idleGetP99)}   `
  + `(waking idle processes; hot, see Get latency)
  ${N} LinkStatus specs        protobuf ${(encoding.protoBytes / 1024).toFixed(0)} KiB, `
  + `encode ${ms(encoding.protoEncodeMs)}, decode ${ms(encoding.protoDecodeMs)}
                               YAML     ${(encoding.yamlBytes / 1024).toFixed(0)} KiB, `
  + `encode ${ms(encoding.yamlEncodeMs)}, decode ${ms(encoding.yamlDecodeMs)}
  engine RSS                   ${rssStart.toFixed(1)} MiB empty, ${rssFull.toFixed(1)} MiB with ${N} resources
figures saved to out/bench-state.json
`);
process.exit(0);
