// mirrored-state: the State a plugin's controllers read through. A get or list of a kind the plugin watches whole
// is answered from that watch's mirror (kind-mirror.ts), not by a round trip to the engine: until the network
// milestone the plugins' calls were 93 gets and 282 lists for 36 writes and 27 watches (13 gets and 78 lists with
// mirrors), each call a gRPC stream the engine's one CPU serves. A kind read that no controller watches whole (an
// output, most often) is watched from its first read on, that read answered by the state. Writes go to the state.
// A mirror lags the state by the events in flight, so a kind this State wrote is read from the state again until
// the mirror has applied the write's own event (every change makes one): a controller reads what it wrote, as it
// did before. A write the state refused (a version conflict: the reader was behind) sends the kind's reads to the
// state until an event of that resource comes. A write answered EXPECT_MS ago whose event has not come (a teardown
// that changed nothing makes none) is let go.
import type { Pointer, Resource } from '../resource/resource.ts';
import { pointerString } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import { compileFilter, type ResourceFilter } from '../state/query.ts';
import { kindKey, type State, type UpdateOptions, type Watch, type WatchEvent, type WatchOptions,
  type WatchSink } from '../state/state.ts';
import type { SharedWatches } from './shared-watches.ts';

/** How long a write's event is waited for before the mirror is trusted again without it. */
export const EXPECT_MS = 2_000;

/**
 * A write of this State on `id`, and the events of `id` its kind's mirror applied since it began (a write's own
 * event may come before its answer). Until `need` is set (the write is answered) the kind is read from the state.
 */
interface Expected {
  id: string; maxVersion: number; destroyed: boolean; any: boolean;
  need?: { version?: number; destroyed?: boolean; any?: boolean };
  until: number;
}

const met = (x: Expected) => !!x.need && ((x.need.version !== undefined && (x.maxVersion >= x.need.version
  || x.destroyed)) || (!!x.need.destroyed && x.destroyed) || (!!x.need.any && x.any));

export class MirroredState implements State {
  private readonly expected = new Map<string, Expected[]>();
  /** The watches opened only to read from (kinds read that no controller watches), each one's end. */
  private readonly kept = new Map<string, Promise<() => void> | undefined>();
  /** Reads answered from a mirror and from the state (tests and figures). */
  readonly reads = { mirror: 0, state: 0 };

  constructor(private readonly state: State, private readonly watches: SharedWatches,
    private readonly now = () => Date.now()) {
    watches.onApplied((kind, events) => this.seen(kind, events));
  }

  async get(p: Pointer): Promise<Resource> {
    const m = this.mirror(p);
    if (!m) return this.state.get(p);
    const r = m.get(p.id);
    if (!r) throw new StateError('not-found', `get: resource ${pointerString(p)} doesn't exist`, pointerString(p));
    return r;
  }

  async list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]> {
    const m = this.mirror(kind);
    if (!m) return this.state.list(kind, filter);
    const all = m.sorted();
    if (!filter?.idQuery && !filter?.labelQueries?.length) return all.slice();
    const match = compileFilter(filter);
    return all.filter((r) => match(r.metadata.id, r.metadata.labels));
  }

  create(r: Resource, opts?: { owner?: string }): Promise<Resource> {
    return this.wrote(r.metadata, () => this.state.create(r, opts));
  }

  update(r: Resource, opts?: UpdateOptions): Promise<Resource> {
    return this.wrote(r.metadata, () => this.state.update(r, opts));
  }

  destroy(p: Pointer, opts?: { owner?: string }): Promise<void> {
    return this.wrote(p, () => this.state.destroy(p, opts), 'destroy');
  }

  teardown(p: Pointer, opts?: { owner?: string }): Promise<boolean> {
    return this.wrote(p, () => this.state.teardown(p, opts), 'teardown');
  }

  teardownAndDestroy(p: Pointer, opts?: { owner?: string }): Promise<void> {
    return this.wrote(p, () => this.state.teardownAndDestroy(p, opts), 'destroy');
  }

  watch(
    req: { namespace: string; type: string; id?: string }, opts: WatchOptions, sink: WatchSink, showAll?: boolean,
  ): Promise<Watch> {
    return this.state.watch(req, opts, sink, showAll);
  }

  /** Ends the watches opened only to read from. */
  close(): void {
    for (const unsubscribe of this.kept.values()) void unsubscribe?.then((u) => u(), () => undefined);
    this.kept.clear();
  }

  /** The kind's mirror, when it may answer now: it holds the kind, and no write of ours waits for its event. */
  private mirror(p: { namespace: string; type: string }) {
    const m = this.watches.mirrorOf(p.namespace, p.type);
    if (!m) this.keep(p);
    const waiting = m ? this.waiting(kindKey(p.namespace, p.type)) : true;
    if (m && !waiting) this.reads.mirror++;
    else this.reads.state++;
    return waiting ? undefined : m;
  }

  /** Watches a kind read that no controller watches whole, for the reads after this one (once: one try). */
  private keep(p: { namespace: string; type: string }): void {
    const kind = kindKey(p.namespace, p.type);
    if (this.kept.has(kind)) return;
    const opened = this.watches.subscribe({ namespace: p.namespace, type: p.type }, () => {});
    this.kept.set(kind, opened);
    opened.catch(() => {
      this.kept.set(kind, undefined); // the state refused it (or it failed): this kind is read from the state
    });
  }

  private waiting(kind: string): boolean {
    const list = this.expected.get(kind);
    if (!list) return false;
    const t = this.now();
    const left = list.filter((x) => !met(x) && (!x.need || x.until > t));
    if (left.length) this.expected.set(kind, left);
    else this.expected.delete(kind);
    return left.length > 0;
  }

  /**
   * A write on `p`: the kind is read from the state until the mirror has applied the write's own event. A written
   * resource's version is awaited; a destroy's, its destroyed event; a teardown's or a failed write's (it may have
   * landed, or found the mirror behind), any event of it since the write began.
   */
  private async wrote<T>(p: Pointer, write: () => Promise<T>, on: 'write' | 'destroy' | 'teardown' = 'write') {
    // Awaited even with no mirror of the kind yet: one may be opening, its bootstrap taken before the write landed.
    const kind = kindKey(p.namespace, p.type);
    const x: Expected = { id: p.id, maxVersion: -1, destroyed: false, any: false, until: Infinity };
    this.waiting(kind); // drops what is met or let go
    this.expected.set(kind, [...this.expected.get(kind) ?? [], x]);
    const settle = (need: NonNullable<Expected['need']>) => {
      x.need = need;
      x.until = this.now() + EXPECT_MS;
    };
    try {
      const out = await write();
      const version = on === 'write' ? (out as Resource).metadata.version : undefined;
      settle(version !== undefined ? { version } : on === 'destroy' ? { destroyed: true } : { any: true });
      return out;
    } catch (e) {
      settle({ any: true });
      throw e;
    }
  }

  private seen(kind: string, events: readonly WatchEvent[]): void {
    const list = this.expected.get(kind);
    if (!list) return;
    for (const e of events) {
      for (const x of list) {
        if (e.resource.metadata.id !== x.id) continue;
        x.any = true;
        if (e.type === 'destroyed') x.destroyed = true;
        else x.maxVersion = Math.max(x.maxVersion, e.resource.metadata.version);
      }
    }
  }
}
