// collector: gathers a watch's events so a test can wait for "the next N".
import type { State, Watch, WatchEvent, WatchOptions } from '../state/state.ts';

export interface Collector {
  readonly events: WatchEvent[];
  /** Batches as delivered (to check aggregation). */
  readonly batches: WatchEvent[][];
  /** Resolves with the next `n` events after those already taken. */
  next(n?: number, timeoutMs?: number): Promise<WatchEvent[]>;
  /** Asserts nothing more arrives within `ms`. */
  quiet(ms?: number): Promise<WatchEvent[]>;
  watch: Watch;
}

export async function collect(
  state: State, req: { namespace: string; type: string; id?: string }, opts: WatchOptions = {}, showAll = true,
): Promise<Collector> {
  const events: WatchEvent[] = [];
  const batches: WatchEvent[][] = [];
  let taken = 0;
  let notify: (() => void) | null = null;
  const watch = await state.watch(req, opts, (batch) => {
    batches.push([...batch]);
    events.push(...batch);
    notify?.();
  }, showAll);
  const c: Collector = {
    events, batches, watch,
    async next(n = 1, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length < taken + n) {
        const left = deadline - Date.now();
        if (left <= 0) {
          const got = JSON.stringify(events.slice(taken).map((e) => `${e.type} ${e.resource.metadata.id}`));
          throw new Error(`expected ${n} more event(s) after ${taken}, got ${events.length - taken}: ${got}`);
        }
        await new Promise<void>((r) => {
          notify = r;
          setTimeout(r, Math.min(left, 50));
        });
      }
      const out = events.slice(taken, taken + n);
      taken += n;
      return out;
    },
    async quiet(ms = 200) {
      await new Promise((r) => setTimeout(r, ms));
      return events.slice(taken);
    },
  };
  return c;
}
