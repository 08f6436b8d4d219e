// mirrored-state: the State a plugin's controllers read through. A get or list of a kind the plugin watches whole
// is answered from that watch's mirror (kind-mirror.ts), not by a round trip to the engine: until the network
// milestone the plugins' calls were 93 gets and 282 lists for 36 writes and 27 watches (13 gets and 78 lists with
// mirrors), each call a gRPC stream the engine's one CPU serves. A kind read that no controller watches whole (an
// output, most often) is watched from its first read on, that read answered by the state. Writes go to the state.
// A mirror lags the state by the events in flight. So that a controller reads what it wrote, as before, a read of a
// kind this State wrote waits until the mirror has applied the write's own event (the engine sends it before the
// answer, so it has mostly come already), or holds a bootstrap of a watch asked for after it; a refused write waits
// for what refused it (the newer version, the resource there or gone), a write of unknown outcome (a deadline) for
// an event of its resource. Reads come from the mirror, so they do not go back in time; a read that has waited
// WAIT_MS is answered by the state, and what it answered is awaited in turn. What is awaited EXPIRE_MS after the
// answer is let go. Incarnations of an id are told apart by `created` (the state gives each a later one).
import type { Pointer, Resource } from '../resource/resource.ts';
import { pointerString } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import { compileFilter, type ResourceFilter } from '../state/query.ts';
import {
  kindKey, type State, type UpdateOptions, type Watch, type WatchEvent, type WatchOptions, type WatchSink,
} from '../state/state.ts';
import type { KindMirror } from './kind-mirror.ts';
import type { SharedWatches } from './shared-watches.ts';
import { msSinceStart } from '../monotonic.ts';

/** The longest a read waits for a mirror to catch up with this State's writes (then it asks the state). */
export const WAIT_MS = 1_000;
/** How long a write's expectation lasts when its event never comes (a resource destroyed while a watch was down). */
export const EXPIRE_MS = 10_000;

/**
 * What a write (or an answer of the state) waits for in its kind's mirror: an event of `id` that `event` accepts,
 * or a resource of `id` (undefined: none) that `entry` accepts, be it the mirror's or the one an event leaves.
 */
interface Wanted {
  event?: (e: WatchEvent) => boolean;
  entry?: (r: Resource | undefined) => boolean;
  /** The resource is to be gone: a bootstrap without it shows that (its destroyed event came before it, or none). */
  gone?: boolean;
  /** What shows this shows every change of the resource committed before it too (a write's own outcome). */
  ordered?: boolean;
}

interface Expectation extends Wanted {
  id: string;
  /** Events of `id` applied while the write was under way (its own may come before its answer). */
  early: WatchEvent[];
  /** When the write began, and when it was answered (what it waits for is known then): msSinceStart. */
  startedAt: number;
  answeredAt?: number;
  met: boolean;
  resolve: () => void;
  done: Promise<void>;
}

/** Refusals that leave the state as it was: what refused it is in the state (a `Wanted` of the refusal, or none). */
const REFUSED = new Set(['owner-conflict', 'phase-conflict', 'pending-finalizers', 'in-use', 'failed-precondition',
  'invalid-argument', 'unimplemented', 'permission-denied', 'unauthenticated', 'resource-exhausted',
  'invalid-bookmark', 'not-found', 'already-exists', 'version-conflict']);

/** The resource of `e`'s id once `e` is applied. */
const after = (e: WatchEvent) => (e.type === 'destroyed' ? undefined : e.resource);

export class MirroredState implements State {
  private readonly expected = new Map<string, Expectation[]>();
  /** The watches opened only to read from (kinds read that no controller watches whole), each one's end. */
  private readonly kept = new Map<string, Promise<() => void>>();
  /** Reads answered from a mirror and from the state (tests and figures). */
  readonly reads = { mirror: 0, state: 0 };

  constructor(private readonly state: State, private readonly watches: SharedWatches,
    private readonly now = () => msSinceStart()) {
    watches.onApplied((kind, events, mirror) => this.applied(kind, events, mirror));
  }

  async get(p: Pointer): Promise<Resource> {
    const m = await this.mirror(p);
    if (!m) {
      // What the state answers, the mirror is to show before it answers again (reads do not go back in time).
      try {
        const r = await this.state.get(p);
        this.expect(p, written(r));
        return r;
      } catch (e) {
        if (e instanceof StateError && e.code === 'not-found') this.expect(p, absent);
        throw e;
      }
    }
    const r = m.get(p.id);
    if (!r) throw new StateError('not-found', `get: resource ${pointerString(p)} doesn't exist`, pointerString(p));
    return r;
  }

  async list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]> {
    const m = await this.mirror(kind);
    if (!m) {
      const rs = await this.state.list(kind, filter);
      const there = new Set(rs.map((r) => r.metadata.id));
      for (const r of rs) this.expect({ ...kind, id: r.metadata.id }, written(r));
      const match = compileFilter(filter);
      const old = this.watches.mirrorOf(kind.namespace, kind.type)?.sorted() ?? [];
      for (const r of old) {
        if (!there.has(r.metadata.id) && match(r.metadata.id, r.metadata.labels)) {
          this.expect({ ...kind, id: r.metadata.id }, absent);
        }
      }
      return rs;
    }
    const all = m.sorted();
    if (!filter?.idQuery && !filter?.labelQueries?.length) return all.slice();
    const match = compileFilter(filter);
    return all.filter((r) => match(r.metadata.id, r.metadata.labels));
  }

  create(r: Resource, opts?: { owner?: string }): Promise<Resource> {
    return this.wrote(r.metadata, () => this.state.create(r, opts), written, (code) =>
      (code === 'already-exists' ? { entry: (cur) => cur !== undefined } : undefined));
  }

  update(r: Resource, opts?: UpdateOptions): Promise<Resource> {
    const { created, version } = r.metadata;
    return this.wrote(r.metadata, () => this.state.update(r, opts), written, (code) => {
      // Refused: the mirror had an old version (or the resource is gone); what the state has is awaited.
      if (code === 'version-conflict') {
        return { entry: (cur) => !cur || cur.metadata.created !== created || cur.metadata.version > version };
      }
      return code === 'not-found' ? absent : undefined;
    });
  }

  destroy(p: Pointer, opts?: { owner?: string }): Promise<void> {
    const was = this.watches.mirrorOf(p.namespace, p.type)?.get(p.id)?.metadata.created;
    return this.wrote(p, () => this.state.destroy(p, opts), () => destroyed(was), gone);
  }

  teardown(p: Pointer, opts?: { owner?: string }): Promise<boolean> {
    const cur = this.watches.mirrorOf(p.namespace, p.type)?.get(p.id);
    // Tearing down already: the state's answer changes nothing (no event comes), and the mirror says so already.
    if (cur?.metadata.phase === 'tearingDown') return this.state.teardown(p, opts);
    const was = cur?.metadata.created;
    const torn = (r: Resource | undefined) => !r || (was !== undefined && r.metadata.created > was)
      || r.metadata.phase === 'tearingDown';
    return this.wrote(p, () => this.state.teardown(p, opts), () => ({
      gone: true,
      ordered: true,
      event: (e) => (was === undefined || e.resource.metadata.created >= was) && torn(after(e)),
      ...(was !== undefined ? { entry: torn } : {}),
    }), gone);
  }

  teardownAndDestroy(p: Pointer, opts?: { owner?: string }): Promise<void> {
    const was = this.watches.mirrorOf(p.namespace, p.type)?.get(p.id)?.metadata.created;
    return this.wrote(p, () => this.state.teardownAndDestroy(p, opts), () => destroyed(was), gone);
  }

  watch(
    req: { namespace: string; type: string; id?: string }, opts: WatchOptions, sink: WatchSink, showAll?: boolean,
  ): Promise<Watch> {
    return this.state.watch(req, opts, sink, showAll);
  }

  /** Ends the watches opened only to read from. */
  close(): void {
    for (const unsubscribe of this.kept.values()) void unsubscribe.then((u) => u(), () => undefined);
    this.kept.clear();
  }

  /**
   * The kind's mirror once it may answer: it is ready and has applied what this State awaits (waited for, WAIT_MS
   * at most); undefined when the state must answer.
   */
  private async mirror(p: { namespace: string; type: string }): Promise<KindMirror | undefined> {
    const m = this.watches.mirrorOf(p.namespace, p.type);
    if (!m) {
      this.keep(p);
      this.reads.state++;
      return undefined;
    }
    const waits = this.pending(kindKey(p.namespace, p.type)).map((x) => x.done);
    if (!m.isReady) waits.push(m.whenReady());
    if (waits.length && !await within(Promise.all(waits), WAIT_MS)) {
      this.reads.state++;
      return undefined;
    }
    if (!m.isReady) { // rebuilt again meanwhile
      this.reads.state++;
      return undefined;
    }
    this.reads.mirror++;
    return m;
  }

  /** Watches a kind read that no controller watches whole, for the reads after this one. */
  private keep(p: { namespace: string; type: string }): void {
    const kind = kindKey(p.namespace, p.type);
    const before = this.kept.get(kind);
    // Kept, and not given up by the watches (a refused reopen): nothing to do.
    if (before && this.watches.mirrorOf(p.namespace, p.type)) return;
    void before?.then((u) => u(), () => undefined);
    const opened = this.watches.subscribe({ namespace: p.namespace, type: p.type }, () => {});
    this.kept.set(kind, opened);
    // Refused (a kind the engine does not let this plugin watch): read from the state, as before; tried again at
    // the next read.
    opened.catch(() => {
      if (this.kept.get(kind) === opened) this.kept.delete(kind);
    });
  }

  /** The kind's expectations not met yet, those answered EXPIRE_MS ago let go. */
  private pending(kind: string): Expectation[] {
    const list = this.expected.get(kind);
    if (!list) return [];
    const t = this.now();
    const left = list.filter((x) => !x.met && (x.answeredAt === undefined || t - x.answeredAt < EXPIRE_MS));
    if (left.length) this.expected.set(kind, left);
    else this.expected.delete(kind);
    return left;
  }

  /** A new expectation of `p`'s kind, answered (`wanted`) or under way. */
  private expectation(p: Pointer): Expectation {
    const kind = kindKey(p.namespace, p.type);
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const x: Expectation = { id: p.id, early: [], startedAt: this.now(), met: false, resolve, done };
    this.expected.set(kind, [...this.pending(kind), x]);
    return x;
  }

  /** What the mirror must show for `p` (known now: an answer of the state). */
  private expect(p: Pointer, wanted: Wanted | undefined): void {
    if (!this.watches.mirrorOf(p.namespace, p.type)) return;
    this.settle(p, this.expectation(p), wanted);
  }

  /** `x` is answered: it waits for `wanted` (none: met), unless the events so far or the mirror show it. */
  private settle(p: Pointer, x: Expectation, wanted: Wanted | undefined): void {
    Object.assign(x, wanted ?? {}, { answeredAt: this.now() });
    const m = this.watches.mirrorOf(p.namespace, p.type);
    if (!wanted || x.early.some((e) => shows(x, e)) || (x.entry && m?.isReady && x.entry(m.get(p.id)))) {
      this.meet(x, this.expected.get(kindKey(p.namespace, p.type)));
    }
    x.early = [];
  }

  /**
   * A write on `p`: from its start the kind's reads wait for it. `onAnswer` says what shows the write done,
   * `onRefusal` (by the error's code) what shows the refusal; a write of unknown outcome waits for an event of it.
   */
  private async wrote<T>(
    p: Pointer, write: () => Promise<T>, onAnswer: (out: T) => Wanted, onRefusal: (code: string) => Wanted | undefined,
  ): Promise<T> {
    const x = this.expectation(p);
    try {
      const out = await write();
      this.settle(p, x, onAnswer(out));
      return out;
    } catch (e) {
      const refused = e instanceof StateError && REFUSED.has(e.code);
      this.settle(p, x, refused ? onRefusal(e.code) : { event: () => true });
      throw e;
    }
  }

  /**
   * `x` is met; when what met it shows the changes committed before it (`ordered`), so are the expectations of its
   * resource answered before it began (theirs were committed first, their events came first).
   */
  private meet(x: Expectation, list?: readonly Expectation[]): void {
    for (const y of x.ordered ? list ?? [] : []) {
      if (y.id === x.id && !y.met && y.answeredAt !== undefined && y.answeredAt <= x.startedAt) {
        y.met = true;
        y.resolve();
      }
    }
    x.met = true;
    x.resolve();
  }

  /**
   * A mirror applied `events`: the expectations they show met are met, and with a bootstrap (the mirror rebuilt)
   * those answered before its watch was asked for (in its snapshot), and those of a resource to be gone that it
   * lacks (destroyed before the snapshot, no event comes; or created and destroyed after it, both events in flight).
   */
  private applied(kind: string, events: readonly WatchEvent[], m: KindMirror): void {
    const list = this.expected.get(kind);
    if (!list) return;
    const rebuilt = events.some((e) => e.type === 'bootstrapped') && m.isReady;
    for (const x of list) {
      if (x.met) continue;
      const mine = events.filter((e) => e.resource.metadata.id === x.id && e.type !== 'bootstrapped');
      if (x.answeredAt === undefined) x.early.push(...mine);
      else if (mine.some((e) => shows(x, e))) this.meet(x, list);
      else if (rebuilt && (x.answeredAt < m.snapshotBy || (x.gone && !m.get(x.id)))) this.meet(x, list);
      else if (x.entry && m.isReady && x.entry(m.get(x.id))) this.meet(x, list);
    }
  }
}

/** Whether `e` shows what `x` waits for. */
function shows(x: Wanted, e: WatchEvent): boolean {
  return !!x.event?.(e) || !!x.entry?.(after(e));
}

/** What shows `out` written: it, of its incarnation at its version or later, or a later incarnation. */
function written(out: Resource): Wanted {
  const { created, version } = out.metadata;
  const shown = (r: Resource | undefined) => !!r && (r.metadata.created > created
    || (r.metadata.created === created && r.metadata.version >= version));
  return {
    event: (e) => e.resource.metadata.created > created
      || (e.resource.metadata.created === created && (e.type === 'destroyed' || shown(e.resource))),
    entry: shown,
    ordered: true,
  };
}

/** The resource is not there (the state said so): the mirror lacks it, or has applied its destroyed event. */
const absent: Wanted = { entry: (r) => r === undefined, gone: true };

/**
 * A destroy: a destroyed event of the incarnation the mirror had when it began (`was`) or a later one; the mirror
 * lacking that incarnation shows it too, when it had it (otherwise the mirror may not have its creation yet).
 */
function destroyed(was: number | undefined): Wanted {
  return {
    gone: true,
    ordered: true,
    event: (e) => e.type === 'destroyed' && (was === undefined || e.resource.metadata.created >= was),
    ...(was !== undefined ? { entry: (r: Resource | undefined) => !r || r.metadata.created > was } : {}),
  };
}

/** A destroy or teardown refused as not found: the mirror is to lack it too. */
function gone(code: string): Wanted | undefined {
  return code === 'not-found' ? absent : undefined;
}

/** Whether `p` settles within `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
