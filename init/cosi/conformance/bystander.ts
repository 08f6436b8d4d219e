// bystander: a client that keeps reading while a test hurts the server, in a thread of its
// own so that what the test itself does (thousands of calls, floods of connections) does
// not delay it: its latencies are the server's fairness, not the test's.
import { Worker } from 'node:worker_threads';
import type { ChannelTls } from '../remote/grpc/client.ts';
import type { Pointer } from '../resource/resource.ts';

export interface Bystander { stop(): Promise<{ latencies: number[]; errors: string[] }> }

export async function startBystander(
  address: string, pointer: Pointer, o: { tls?: ChannelTls; everyMs?: number } = {},
): Promise<Bystander> {
  // The worker is TypeScript like its caller: it registers tsx before importing it.
  const entry = new URL('./bystander-worker.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(entry)}); })`;
  const w = new Worker(boot, { eval: true, workerData: { address, pointer, tls: o.tls, everyMs: o.everyMs ?? 20 } });
  const message = () => new Promise<Record<string, unknown>>((resolve, reject) => {
    w.once('message', resolve); w.once('error', reject);
  });
  await message();
  return {
    async stop() {
      const done = message();
      w.postMessage('stop');
      const r = await done as { latencies: number[]; errors: string[] };
      await w.terminate();
      return r;
    },
  };
}
