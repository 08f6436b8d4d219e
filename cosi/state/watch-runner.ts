// watch-runner: one watch over a bucket of the memory state. It builds the initial
// events (current resource, bootstrap, tail or bookmark replay), then reads the
// bucket's event ring forward from its own position. The sink's promise is the
// backpressure: a watcher whose sink is slower than the writers falls behind, and
// once its position leaves the ring it gets "buffer overrun" and ends.

import { tombstone } from '../resource/resource.ts';
import { StateError } from './errors.ts';
import type { StoredEvent } from './event-ring.ts';
import type { BookmarkCodec } from './bookmark.ts';
import type { Bucket } from './bucket.ts';
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
 * It comes with the one-event batch a non-aggregated watcher is handed, shared too.
 */
const shared = new WeakMap<StoredEvent, readonly [WatchEvent]>();
function asIs(ev: StoredEvent, bookmark: (seq: number) => Uint8Array): readonly [WatchEvent] {
  let one = shared.get(ev);
  if (!one) {
    one = Object.freeze([{
      type: ev.type, resource: ev.resource, ...(ev.old ? { old: ev.old } : {}), bookmark: bookmark(ev.seq),
    }] as const);
    shared.set(ev, one);
  }
  return one;
}

export async function runWatch(
  bookmarks: BookmarkCodec, b: Bucket, id: string | undefined, o: WatchOptions, sink: WatchSink, showAll: boolean,
): Promise<Watch> {
  const single = id !== undefined;
  validate(single, o);
  const match = single ? (rid: string) => rid === id : compileFilter(o);
  const filtered = !single && !!(o.idQuery || o.labelQueries?.length);
  const bookmark = (seq: number) => bookmarks.encode(b.hash, seq);

  /** What a stored event looks like to this watcher (as a one-event batch), or null if it does not concern it. */
  const translate = (ev: StoredEvent): readonly WatchEvent[] | null => {
    const r = ev.resource;
    if (single) return r.metadata.id === id ? asIs(ev, bookmark) : null;
    if (!filtered) return asIs(ev, bookmark);
    const base = { bookmark: bookmark(ev.seq) };
    const now = match(r.metadata.id, r.metadata.labels);
    if (ev.type !== 'updated') return now ? [{ type: ev.type, resource: r, ...base }] : null;
    const before = match(ev.old!.metadata.id, ev.old!.metadata.labels);
    if (before && now) return [{ type: 'updated', resource: r, old: ev.old!, ...base }];
    if (now) return [{ type: 'created', resource: r, ...base }];
    if (before) return [{ type: 'destroyed', resource: r, ...base }];
    return null;
  };

  // Everything up to here is synchronous with the bucket, so `pos` and the initial
  // events describe one consistent moment.
  const initial: WatchEvent[] = [];
  let pos = b.ring.next;
  const tail = o.tailEvents ?? 0;
  if (o.startFromBookmark) {
    const seq = bookmarks.decode(b.hash, o.startFromBookmark);
    if (seq >= b.ring.next || seq + 1 < b.ring.oldest) {
      throw new StateError('invalid-bookmark',
        `bookmark position ${seq} is outside the kept history (${b.ring.oldest - 1}..${b.ring.next - 1})`);
    }
    pos = seq + 1;
  } else if (tail > 0) {
    let found = 0;
    for (let seq = b.ring.next - 1; seq >= b.ring.oldest && found < tail; seq--) {
      if (translate(b.ring.at(seq)!)) {
        found++;
        pos = seq;
      }
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
    initial.push({ type: 'bootstrapped', resource: b.kindTombstone(), bookmark: bookmark(pos - 1) });
  }
  if (!single && o.bootstrapBookmark && !o.bootstrapContents) {
    initial.unshift({ type: 'noop', resource: b.kindTombstone(), bookmark: bookmark(pos - 1) });
  }

  const visible = (e: WatchEvent) => showAll || (e.type !== 'bootstrapped' && e.type !== 'errored');
  /** Events handed out before the ring's: the initial ones, or the errored one of an overrun. */
  let queued = initial.filter(visible);
  let overrun: StateError | undefined;
  /** close() was called: end once no sink call is pending. */
  let closing = false;
  /** A sink call returned a promise that has not settled (a slow reader): nothing more until it does. */
  let waiting = false;
  let ended = false;
  let resolveDone!: (e: Error | undefined) => void;
  const done = new Promise<Error | undefined>((r) => {
    resolveDone = r;
  });
  const finish = (e: Error | undefined) => {
    if (ended) return;
    ended = true;
    b.wakers.delete(pump);
    resolveDone(e);
  };
  const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

  /** Hands a batch to the sink; true when it asked to wait (the pump resumes once its promise settles). */
  const send = (events: readonly WatchEvent[]): boolean => {
    const wait = sink(events);
    if (!wait) return false;
    waiting = true;
    wait.then(() => {
      waiting = false;
      pump();
    }, (e: unknown) => {
      waiting = false;
      finish(asError(e));
    });
    return true;
  };

  // Delivers everything due, in order, synchronously: the bucket wakes its watchers with
  // one microtask per write, so a hundred watchers cost no promise or allocation each.
  function pump(): void {
    try {
      while (!ended && !waiting) {
        if (closing) {
          finish(undefined);
          return;
        }
        if (queued.length) {
          const batch = o.aggregated ? queued : [queued[0]!];
          queued = o.aggregated ? [] : queued.slice(1);
          if (send(batch)) return;
          continue;
        }
        if (overrun) {
          finish(overrun);
          return;
        }
        if (pos >= b.ring.next) return;
        if (pos < b.ring.oldest) {
          overrun = new StateError('buffer-overrun',
            `watch of ${b.type} in ${b.namespace} fell behind by more than ${b.ring.capacity} events: buffer overrun`);
          queued = [{ type: 'errored' as const, resource: b.kindTombstone(), error: 'buffer overrun' }]
            .filter(visible);
          continue;
        }
        if (!o.aggregated) {
          const one = translate(b.ring.at(pos++)!);
          if (one && send(one)) return;
          continue;
        }
        const batch: WatchEvent[] = [];
        while (pos < b.ring.next) {
          const one = translate(b.ring.at(pos++)!);
          if (one) batch.push(one[0]!);
        }
        if (batch.length && send(batch)) return;
      }
    } catch (e) { finish(asError(e)); }
  }

  b.wakers.add(pump);
  pump();
  return { close: () => {
    closing = true;
    if (!waiting) pump();
  }, done };
}
