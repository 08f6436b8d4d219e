// shared-watches: one watch on the state per input that a runtime's controllers share.
// In a plugin, several controllers watch the same kinds (the network plugin's sixteen
// controllers have 34 inputs over 19 kinds): each was its own stream to the engine,
// opened one round trip after another at boot, and every event crossed the socket once
// per watcher. Now the first subscriber opens the watch, later ones join it, the last
// one to leave closes it; events reach every subscriber in order. A watch the state ends
// while it has subscribers (a watcher fallen behind gets "buffer overrun", a stream cut)
// is opened again, and its subscribers are told to look again: whatever changed
// meanwhile came as no event. (Unnoticed, such an end left a plugin's controller
// asleep for good: dhcp.test's 256 MiB case, four addresses never applied.)
// With `mirror`, a watch of a whole kind also keeps that kind's resources (kind-mirror.ts): it bootstraps them, and
// a subscriber is set up once they are in; mirrored-state.ts reads them instead of asking the state.
import { kindKey, type State, type Watch, type WatchEvent } from '../state/state.ts';
import { KindMirror } from './kind-mirror.ts';

export interface WatchTarget { namespace: string; type: string; id?: string }
/** `resync`: the watch was opened again after it ended; events may have been missed. */
type Listener = (events: readonly WatchEvent[], resync?: boolean) => void;

interface Shared { listeners: Set<Listener>; watch: Promise<Watch>; closed: boolean; mirror?: KindMirror }

/** Told of every batch a mirror applied, after it applied it (mirrored-state.ts waits for its own writes so). */
export type AppliedHook = (kind: string, events: readonly WatchEvent[]) => void;

export interface SharedWatchOptions {
  /** Keep each whole kind watched as a mirror (mirrorOf). */
  mirror?: boolean;
}

/** How long to wait before opening again a watch that ended, and at most (doubling). */
const REOPEN_MS = { first: 100, max: 5_000 };

export class SharedWatches {
  private readonly open = new Map<string, Shared>();

  private readonly applied = new Set<AppliedHook>();

  constructor(private readonly state: State, private readonly o: SharedWatchOptions = {}) {}

  /** The mirror of a whole kind, when one is watched and holds the kind now (not while it is rebuilt). */
  mirrorOf(namespace: string, type: string): KindMirror | undefined {
    const m = this.open.get(`${kindKey(namespace, type)}\u0000`)?.mirror;
    return m?.isReady ? m : undefined;
  }

  /** Calls `hook` after each batch a mirror applies. */
  onApplied(hook: AppliedHook): void {
    this.applied.add(hook);
  }

  /** How many watches are open on the state (one per distinct target). */
  get size(): number { return this.open.size; }

  /**
   * Calls `listener` with every event on `target` from now on; resolves when the watch is set up, with the
   * function that unsubscribes. A watch that fails to open fails every subscriber waiting for it; the next
   * subscriber opens a new one.
   */
  async subscribe(target: WatchTarget, listener: Listener): Promise<() => void> {
    const key = `${kindKey(target.namespace, target.type)}\u0000${target.id ?? ''}`;
    let s = this.open.get(key);
    if (!s) {
      s = this.openShared(key, target, new Set());
      this.open.set(key, s);
    }
    const shared = s;
    shared.listeners.add(listener);
    try {
      await shared.watch;
      await shared.mirror?.ready;
    } catch (e) {
      shared.listeners.delete(listener);
      throw e;
    }
    return () => {
      if (!shared.listeners.delete(listener) || shared.listeners.size) return;
      shared.closed = true;
      if (this.open.get(key) === shared) this.open.delete(key);
      void shared.watch.then((w) => w.close(), () => undefined); // a failed open has nothing to close
    };
  }

  /** Opens the watch of `key` for `listeners`, and opens it again whenever it ends while they are there. */
  private openShared(
    key: string, target: WatchTarget, listeners: Set<Listener>, delayMs = REOPEN_MS.first, mirror?: KindMirror,
  ): Shared {
    // A whole kind's mirror bootstraps (its events come in one batch, the bootstrapped one included: showAll).
    mirror ??= this.o.mirror && target.id === undefined ? new KindMirror() : undefined;
    const kind = kindKey(target.namespace, target.type);
    const watch = this.state.watch(
      { namespace: target.namespace, type: target.type, ...(target.id !== undefined ? { id: target.id } : {}) },
      mirror ? { bootstrapContents: true, aggregated: true } : {},
      (events) => {
        if (mirror) {
          mirror.apply(events);
          for (const h of this.applied) h(kind, events);
        }
        for (const l of [...listeners]) l(events);
      },
      !!mirror,
    );
    const shared: Shared = { listeners, watch, closed: false, ...(mirror ? { mirror } : {}) };
    watch.then((w) => w.done.then(() => {
      mirror?.rebuild(); // what comes meanwhile is missed: not read from until a new bootstrap is in
      if (shared.closed || this.open.get(key) !== shared || !listeners.size) return;
      // Ended under its subscribers: open it again (after a moment, longer each time it ends at once).
      setTimeout(() => {
        if (shared.closed || this.open.get(key) !== shared || !listeners.size) return;
        const next = this.openShared(key, target, listeners, Math.min(delayMs * 2, REOPEN_MS.max), mirror);
        this.open.set(key, next);
        next.watch.then(() => {
          for (const l of [...listeners]) l([], true);
        }, () => {
          // Not open again: the next subscriber tries, as after any failed open.
          if (this.open.get(key) === next) this.open.delete(key);
        });
      }, delayMs).unref?.();
    }), () => {
      if (this.open.get(key) === shared) this.open.delete(key);
    });
    return shared;
  }
}
