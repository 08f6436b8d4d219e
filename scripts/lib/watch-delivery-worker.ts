// watch-delivery-worker: one client thread of the watch benchmark. Opens its share of
// the kind watchers (over its own connections), records when each event arrived on the
// monotonic clock every thread shares, and reports the arrivals when told to stop.
import { parentPort, workerData } from 'node:worker_threads';
import { RemoteState } from '../../cosi/remote/client.ts';
import type { ChannelTls } from '../../cosi/remote/grpc/client.ts';

interface Job {
  address: string; tls: ChannelTls; namespace: string; type: string; watchers: number; connections: number;
}
const job = workerData as Job;
const conns = Array.from({ length: job.connections }, () => new RemoteState(job.address, { tls: job.tls }));
/** [sequence label, arrival ns] per event, flat. */
const arrivals: number[] = [];
const watches = await Promise.all(Array.from({ length: job.watchers }, (_, i) => conns[i % conns.length]!.watch(
  { namespace: job.namespace, type: job.type }, {},
  (events) => {
    const now = Number(process.hrtime.bigint());
    // The sequence rides in a label: reading it needs no spec decode.
    for (const e of events) {
      const seq = e.resource.metadata.labels.seq;
      if (seq !== undefined) arrivals.push(Number(seq), now);
    }
  },
)));
parentPort!.postMessage({ ready: true });
parentPort!.once('message', () => {
  for (const w of watches) w.close();
  for (const c of conns) c.close();
  parentPort!.postMessage({ arrivals });
});
