// watch-runner: one watch over a bucket of the memory state. It builds the initial
// events (current resource, bootstrap, tail or bookmark replay), then reads the
// bucket's event ring forward from its own position. The sink's promise is the
// backpressure: a watcher whose sink is slower than the writers falls behind, and
// once its position leaves the ring it gets "buffer overrun" and ends.

import { tombstone } from '../resource/resource.ts';
import { StateError } from './errors.ts';
import type { StoredEvent } from './event-ring.ts';
import type { Bucket, MemoryState } from './memory-state.ts';
import { compileFilter } from './query.ts';
import type { Watch, WatchEvent, WatchOptions, WatchSink } from './state.ts';

function validate(single: boolean, o: WatchOptions): void {
  if (single && (o.bootstrapContents || o.labelQueries?.length || o.idQuery || o.bootstrapBookmark)) {
    throw new StateError('unimplemented',
      'bootstrap, bookmarks on start, label and id queries are not supported when watching a single resource');
  }
  const tail = o.tailEvents ?? 0;
  if (!Number.isInteger(tail) || tail < 0) {
    throw new StateError('invalid-argument', `tail events must be a non-negative integer, got ${tail}`);
  }
  if (tail > 0 && o.startFromBookmark) {
    throw new StateError('invalid-argument', 'tail events and start from bookmark cannot be combined');
  }
  if (tail > 0 && o.bootstrapContents) {
    throw new StateError('invalid-argument', 'tail events and bootstrap contents cannot be combined');
  }
}

/**
 * A stored event as every unfiltered watcher of its kind sees it: one object per event,
 * shared, so that whoever serializes it (the API server) can do so once for all of them.
 */
const shared = new WeakMap<StoredEvent, WatchEvent>();
function asIs(ev: StoredEvent, bookmark: (seq: number) => Uint8Array): WatchEvent {
  let e = shared.get(ev);
  if (!e) {
    e = { type: ev.type, resource: ev.resource, ...(ev.old ? { old: ev.old } : {}), bookmark: bookmark(ev.seq) };
    shared.set(ev, e);
  }
  return e;
}

export async function runWatch(
  state: MemoryState, b: Bucket, id: string | undefined, o: WatchOptions, sink: WatchSink, showAll: boolean,
): Promise<Watch> {
  const single = id !== undefined;
  validate(single, o);
  const match = single ? (rid: string) => rid === id : compileFilter(o);
  const filtered = !single && !!(o.idQuery || o.labelQueries?.length);
  const bookmark = (seq: number) => state.bookmarks.encode(b.hash, seq);

  /** What a stored event looks like to this watcher, or null if it does not concern it. */
  const translate = (ev: StoredEvent): WatchEvent | null => {
    const r = ev.resource;
    if (single) return r.metadata.id === id ? asIs(ev, bookmark) : null;
    if (!filtered) return asIs(ev, bookmark);
    const base = { bookmark: bookmark(ev.seq) };
    const now = match(r.metadata.id, r.metadata.labels);
    if (ev.type !== 'updated') return now ? { type: ev.type, resource: r, ...base } : null;
    const before = match(ev.old!.metadata.id, ev.old!.metadata.labels);
    if (before && now) return { type: 'updated', resource: r, old: ev.old!, ...base };
    if (now) return { type: 'created', resource: r, ...base };
    if (before) return { type: 'destroyed', resource: r, ...base };
    return null;
  };

  // Everything up to here is synchronous with the bucket, so `pos` and the initial
  // events describe one consistent moment.
  const initial: WatchEvent[] = [];
  let pos = b.ring.next;
  const tail = o.tailEvents ?? 0;
  if (o.startFromBookmark) {
    const seq = state.bookmarks.decode(b.hash, o.startFromBookmark);
    if (seq >= b.ring.next || seq + 1 < b.ring.oldest) {
      throw new StateError('invalid-bookmark',
        `bookmark position ${seq} is outside the kept history (${b.ring.oldest - 1}..${b.ring.next - 1})`);
    }
    pos = seq + 1;
  } else if (tail > 0) {
    let found = 0;
    for (let seq = b.ring.next - 1; seq >= b.ring.oldest && found < tail; seq--) {
      if (translate(b.ring.at(seq)!)) { found++; pos = seq; }
    }
  } else if (single) {
    const cur = b.resources.get(id);
    initial.push(cur
      ? { type: 'created', resource: cur }
      : { type: 'destroyed', resource: tombstone({ namespace: b.namespace, type: b.type, id }) });
  } else if (o.bootstrapContents) {
    for (const r of b.sortedResources()) {
      if (match(r.metadata.id, r.metadata.labels)) initial.push({ type: 'created', resource: r });
    }
    initial.push({ type: 'bootstrapped', resource: state.kindTombstone(b), bookmark: bookmark(pos - 1) });
  }
  if (!single && o.bootstrapBookmark && !o.bootstrapContents) {
    initial.unshift({ type: 'noop', resource: state.kindTombstone(b), bookmark: bookmark(pos - 1) });
  }

  const visible = (e: WatchEvent) => showAll || (e.type !== 'bootstrapped' && e.type !== 'errored');
  let closed = false;
  let wake: (() => void) | null = null;
  const waker = () => { const w = wake; wake = null; w?.(); };
  b.wakers.add(waker);

  const deliver = async (events: WatchEvent[]) => {
    const shown = events.filter(visible);
    if (!shown.length) return;
    if (o.aggregated) { if (!closed) await sink(shown); return; }
    for (const e of shown) { if (closed) return; await sink([e]); }
  };

  const done = (async (): Promise<Error | undefined> => {
    try {
      await deliver(initial);
      while (!closed) {
        if (pos >= b.ring.next) { await new Promise<void>((r) => { wake = r; }); continue; }
        const batch: WatchEvent[] = [];
        while (pos < b.ring.next && (o.aggregated || batch.length === 0)) {
          if (pos < b.ring.oldest) {
            const err = new StateError('buffer-overrun',
              `watch of ${b.type} in ${b.namespace} fell behind by more than ${b.ring.capacity} events: `
                + 'buffer overrun');
            await deliver([{ type: 'errored', resource: state.kindTombstone(b), error: 'buffer overrun' }]);
            return err;
          }
          const out = translate(b.ring.at(pos)!);
          pos++;
          if (out) batch.push(out);
        }
        await deliver(batch);
      }
      return undefined;
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    } finally {
      b.wakers.delete(waker);
    }
  })();

  return { close: () => { closed = true; waker(); }, done };
}

