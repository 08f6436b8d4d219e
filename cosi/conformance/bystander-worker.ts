// bystander-worker: the thread of bystander.ts: Gets one resource (or Lists a kind) every few ms on a
// connection of its own and reports how long each took when told to stop.
import { parentPort, workerData } from 'node:worker_threads';
import { RemoteState } from '../remote/client.ts';
import type { ChannelTls } from '../remote/grpc/client.ts';
import type { Pointer } from '../resource/resource.ts';

const job = workerData as {
  address: string; tls?: ChannelTls; pointer: Pointer; everyMs: number; call: 'get' | 'list';
  kind: { namespace: string; type: string }; timeoutMs: number;
};
const client = new RemoteState(job.address, { timeoutMs: job.timeoutMs, ...(job.tls ? { tls: job.tls } : {}) });
const call = job.call === 'list' ? () => client.list(job.kind) : () => client.get(job.pointer);
const latencies: number[] = [];
const errors: string[] = [];
let running = true;
parentPort!.once('message', () => {
  running = false;
});
parentPort!.postMessage({ ready: true });
while (running) {
  const t0 = performance.now();
  try {
    await call();
  } catch (e) {
    errors.push((e as Error).message);
  }
  latencies.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, job.everyMs));
}
client.close();
parentPort!.postMessage({ latencies, errors });
