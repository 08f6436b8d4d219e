// watch-flood: one reader opening thousands of watches at once while a bystander, on a connection and thread of its
// own, keeps calling: how long the bystander waits is how fairly the server shares itself. Used by `bench:state
// --flood` (figures) and a test (every bystander call ends within its deadline).
import type { ChannelTls } from '../remote/grpc/client.ts';
import type { Pointer } from '../resource/resource.ts';
import { startBystander } from './bystander.ts';
import { nextMessage, tsWorker } from './ts-worker.ts';

export interface FloodOptions {
  address: string; tls?: ChannelTls;
  /** The kind the flood watches (with its contents), and the resource the bystander reads. */
  kind: { namespace: string; type: string }; bystanderReads: Pointer;
  /** Watches to open at once (default 3000), over this many connections (default 12: 256 watches each at most). */
  watches?: number; connections?: number;
  /** What the bystander calls every 20 ms: Get of its resource, or List of the kind. */
  bystanderCall?: 'get' | 'list';
  /** The bystander's deadline per call (default 10 s): a call past it is an error. */
  bystanderTimeoutMs?: number;
}

export interface FloodResult {
  /** From the first Watch sent until every one bootstrapped or failed. */
  bootstrappedMs: number; opened: number; floodErrors: string[];
  /** The bystander's calls during the flood, ms each, and its errors. */
  latencies: number[]; bystanderErrors: string[];
}

export async function measureWatchFlood(o: FloodOptions): Promise<FloodResult> {
  const bystander = await startBystander(o.address, o.bystanderReads, {
    ...(o.tls ? { tls: o.tls } : {}), call: o.bystanderCall ?? 'get', timeoutMs: o.bystanderTimeoutMs ?? 10_000,
    kind: o.kind,
  });
  const flood = tsWorker(new URL('./watch-flood-worker.ts', import.meta.url), {
    address: o.address, tls: o.tls, kind: o.kind, watches: o.watches ?? 3000, connections: o.connections ?? 12,
  });
  const opened = await nextMessage(flood) as { bootstrappedMs: number; opened: number; errors: string[] };
  const { latencies, errors } = await bystander.stop();
  const closed = nextMessage(flood);
  flood.postMessage('stop');
  await closed;
  await flood.terminate();
  return {
    bootstrappedMs: opened.bootstrappedMs, opened: opened.opened, floodErrors: opened.errors, latencies,
    bystanderErrors: errors,
  };
}
