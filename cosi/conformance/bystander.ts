// bystander: a client that keeps reading while a test hurts the server, in a thread of its
// own so that what the test itself does (thousands of calls, floods of connections) does
// not delay it: its latencies are the server's fairness, not the test's.
import type { ChannelTls } from '../remote/grpc/client.ts';
import type { Pointer } from '../resource/resource.ts';
import { nextMessage, tsWorker } from './ts-worker.ts';

export interface Bystander { stop(): Promise<{ latencies: number[]; errors: string[] }> }

export interface BystanderOptions {
  tls?: ChannelTls; everyMs?: number;
  /** Get `pointer` (default), or List `kind`. */
  call?: 'get' | 'list'; kind?: { namespace: string; type: string };
  /** Each call's deadline (default 10 s). */
  timeoutMs?: number;
}

export async function startBystander(address: string, pointer: Pointer, o: BystanderOptions = {}): Promise<Bystander> {
  const w = tsWorker(new URL('./bystander-worker.ts', import.meta.url), {
    address, pointer, tls: o.tls, everyMs: o.everyMs ?? 20, call: o.call ?? 'get', kind: o.kind ?? pointer,
    timeoutMs: o.timeoutMs ?? 10_000,
  });
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
