// watch-delivery: how long an update takes to reach every kind watcher, with the
// watchers spread over client threads (as watchers are spread over plugins and
// cosictl processes on a machine) so that the figure is the server's delivery and not
// one client thread handling a hundred copies of each event in turn. Latency is from
// just before the Update call to the event's arrival at each watcher.
import { Worker } from 'node:worker_threads';
import type { ChannelTls } from '../../init/cosi/remote/grpc/client.ts';

export interface WatchDeliveryOptions {
  address: string;
  tls: ChannelTls;
  kind: { namespace: string; type: string };
  watchers: number;
  /** Client threads the watchers are spread over. */
  threads: number;
  /** Connections per thread. */
  connections: number;
  updates: number;
  /** Makes update i, labelled seq=i, on the watched kind (-1: a warm-up update). */
  update(i: number): Promise<void>;
}

export interface WatchDelivery { latenciesMs: number[]; expected: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WARM_UP = 50;

export async function measureWatchDelivery(o: WatchDeliveryOptions): Promise<WatchDelivery> {
  const workers = Array.from({ length: o.threads }, (_, t) => {
    const share = Math.floor(o.watchers / o.threads) + (t < o.watchers % o.threads ? 1 : 0);
    // The worker is TypeScript like this script: it registers tsx before importing it.
    const entry = new URL('./watch-delivery-worker.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, {
      eval: true,
      workerData: { address: o.address, tls: o.tls, ...o.kind, watchers: share, connections: o.connections },
    });
  });
  const message = (w: Worker) => new Promise<Record<string, unknown>>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await Promise.all(workers.map(message));
  // The first events compile the delivery path in every process: those are not counted (as Get is measured warm).
  for (let i = 0; i < WARM_UP; i++) { await o.update(-1); await sleep(5); }
  const sentNs: number[] = [];
  for (let i = 0; i < o.updates; i++) {
    sentNs[i] = Number(process.hrtime.bigint());
    await o.update(i);
    await sleep(5);
  }
  await sleep(500); // the last events in flight
  const reports = await Promise.all(workers.map((w) => { const m = message(w); w.postMessage('stop'); return m; }));
  await Promise.all(workers.map((w) => w.terminate()));
  const latenciesMs: number[] = [];
  for (const r of reports) {
    const a = r.arrivals as number[];
    for (let i = 0; i < a.length; i += 2) if (a[i]! >= 0) latenciesMs.push((a[i + 1]! - sentNs[a[i]!]!) / 1e6);
  }
  return { latenciesMs, expected: o.updates * o.watchers };
}
