// status-writer: a status a long task keeps rewriting (progress in bytes, then a phase): written at most
// once per `minMs` unless forced, the writes one after another, each with the newest value by the time it
// runs, so an older status never lands over a newer one. A failed write is reported, not thrown: the task
// goes on.
import type { Pointer } from '../resource/resource.ts';
import type { State } from './state.ts';
import { upsert } from './upsert.ts';

export interface StatusWriter<T> {
  /** Keeps `spec` as the newest status and writes it, unless one was written less than minMs ago. */
  write(spec: T, force?: boolean): Promise<unknown>;
}

export function statusWriter<T>(o: {
  state: State; pointer: Pointer; owner: string; minMs: number; onError: (e: Error) => void;
}): StatusWriter<T> {
  let latest: T;
  let last = 0;
  let writes: Promise<unknown> = Promise.resolve();
  return {
    write(spec, force = true) {
      latest = spec;
      const now = Date.now();
      if (!force && now - last < o.minMs) return writes;
      last = now;
      writes = writes.then(() => upsert(o.state, o.pointer, latest, o.owner)).catch(o.onError);
      return writes;
    },
  };
}
