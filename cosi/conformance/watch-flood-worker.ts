// watch-flood-worker: the thread of watch-flood.ts: one reader opening `watches` kind watches with their contents
// at once, spread over `connections` connections of its own; it reports when every watch has bootstrapped (or
// failed), holds them until told to stop, then closes them.
import { parentPort, workerData } from 'node:worker_threads';
import { RemoteState } from '../remote/client.ts';
import type { ChannelTls } from '../remote/grpc/client.ts';
import type { Watch } from '../state/state.ts';

const job = workerData as {
  address: string; tls?: ChannelTls; kind: { namespace: string; type: string }; watches: number; connections: number;
};
const clients = Array.from({ length: job.connections },
  () => new RemoteState(job.address, { timeoutMs: 60_000, ...(job.tls ? { tls: job.tls } : {}) }));
const opened: Watch[] = [];
const errors: string[] = [];
const t0 = performance.now();
await Promise.all(Array.from({ length: job.watches }, (_, i) => new Promise<void>((resolve) => {
  let settled = false;
  const settle = () => {
    if (!settled) {
      settled = true;
      resolve();
    }
  };
  clients[i % clients.length]!.watch(job.kind, { bootstrapContents: true }, (events) => {
    if (events.some((e) => e.type === 'bootstrapped')) settle();
  }, true).then((w) => { // every event type: the bootstrapped one says the contents are all here
    opened.push(w);
    void w.done.then((e) => {
      if (e) {
        errors.push(e.message);
        settle();
      }
    });
  }, (e: Error) => {
    errors.push(e.message);
    settle();
  });
})));
parentPort!.postMessage({
  bootstrappedMs: performance.now() - t0, opened: opened.length, errors: [...new Set(errors)],
});
parentPort!.once('message', () => {
  for (const w of opened) w.close();
  for (const c of clients) c.close();
  parentPort!.postMessage({ closed: true });
});
