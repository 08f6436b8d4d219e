// watch-delivery: how long an update takes to reach every kind watcher, with the
// watchers spread over client threads (as watchers are spread over plugins and
// cosictl processes on a machine) so that the figure is the server's delivery and not
// one client thread handling a hundred copies of each event in turn. Latency is from
// just before the Update call to the event's arrival at each watcher; the updates are
// made by a thread of their own (watch-delivery-updater.ts).
import { nextMessage, tsWorker } from '../../cosi/conformance/ts-worker.ts';
import type { ChannelTls } from '../../cosi/remote/grpc/client.ts';

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
  /** The resource of the watched kind that the updates change (labelled seq=i), and the string field of its spec. */
  id: string;
  specField: string;
}

export interface WatchDelivery { latenciesMs: number[]; expected: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WARM_UP = 50;

export async function measureWatchDelivery(o: WatchDeliveryOptions): Promise<WatchDelivery> {
  const watchers = Array.from({ length: o.threads }, (_, t) => {
    const share = Math.floor(o.watchers / o.threads) + (t < o.watchers % o.threads ? 1 : 0);
    return tsWorker(new URL('./watch-delivery-worker.ts', import.meta.url),
      { address: o.address, tls: o.tls, ...o.kind, watchers: share, connections: o.connections });
  });
  const updater = tsWorker(new URL('./watch-delivery-updater.ts', import.meta.url),
    { address: o.address, tls: o.tls, ...o.kind, id: o.id, specField: o.specField });
  await Promise.all([...watchers, updater].map(nextMessage));
  const run = async (from: number, count: number) => {
    const m = nextMessage(updater);
    updater.postMessage({ from, count });
    return (await m).sentNs as number[];
  };
  // The first events compile the delivery path in every process: those are not counted (as Get is measured warm).
  await run(-WARM_UP, WARM_UP);
  const sentNs = await run(0, o.updates);
  await sleep(500); // the last events in flight
  const reports = await Promise.all(watchers.map((w) => {
    const m = nextMessage(w);
    w.postMessage('stop');
    return m;
  }));
  updater.postMessage('stop');
  await Promise.all([...watchers, updater].map((w) => w.terminate()));
  const latenciesMs: number[] = [];
  for (const r of reports) {
    const a = r.arrivals as number[];
    for (let i = 0; i < a.length; i += 2) if (a[i]! >= 0) latenciesMs.push((a[i + 1]! - sentNs[a[i]!]!) / 1e6);
  }
  return { latenciesMs, expected: o.updates * o.watchers };
}
