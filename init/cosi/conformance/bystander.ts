// bystander: a client that keeps reading while a test hurts the server, in a thread of its
// own so that what the test itself does (thousands of calls, floods of connections) does
// not delay it: its latencies are the server's fairness, not the test's.
import type { ChannelTls } from '../remote/grpc/client.ts';
import type { Pointer } from '../resource/resource.ts';
import { nextMessage, tsWorker } from './ts-worker.ts';

export interface Bystander { stop(): Promise<{ latencies: number[]; errors: string[] }> }

export async function startBystander(
  address: string, pointer: Pointer, o: { tls?: ChannelTls; everyMs?: number } = {},
): Promise<Bystander> {
  const w = tsWorker(new URL('./bystander-worker.ts', import.meta.url),
    { address, pointer, tls: o.tls, everyMs: o.everyMs ?? 20 });
  await nextMessage(w);
  return {
    async stop() {
      const done = nextMessage(w);
      w.postMessage('stop');
      const r = await done as { latencies: number[]; errors: string[] };
      await w.terminate();
      return r;
    },
  };
}
