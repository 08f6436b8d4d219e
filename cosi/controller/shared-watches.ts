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
// its subscribers see the bootstrap's events, bootstrapped and errored ones too; mirrored-state.ts reads them
// instead of asking the state.
import { kindKey, type State, type Watch, type WatchEvent } from '../state/state.ts';
import { KindMirror } from './kind-mirror.ts';
import { msSinceStart } from '../monotonic.ts';

export interface WatchTarget { namespace: string; type: string; id?: string }
/** `resync`: the watch was opened again after it ended; events may have been missed. */
type Listener = (events: readonly WatchEvent[], resync?: boolean) => void;

interface Shared {
  listeners: Set<Listener>; watch: Promise<Watch>; closed: boolean; mirror?: KindMirror;
  /** Opened again after the first one ended: its subscribers are told (a resync) once it is open. */
  reopened: boolean;
}

/** Told of every batch a mirror applied, after it applied it (mirrored-state.ts waits for its own writes so). */
export type AppliedHook = (kind: string, events: readonly WatchEvent[], mirror: KindMirror) => void;

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

  /** The mirror of a whole kind watched (ready or not: KindMirror.isReady). */
  mirrorOf(namespace: string, type: string): KindMirror | undefined {
    return this.open.get(`${kindKey(namespace, type)}\u0000`)?.mirror;
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
      // A watch opened again (or being retried) has been set up once: its subscribers are told when it is open.
      if (!shared.reopened) await shared.watch;
    } catch (e) {
      shared.listeners.delete(listener);
      throw e;
    }
    return () => {
      if (!shared.listeners.delete(listener) || shared.listeners.size) return;
      // The watch open now for these listeners: the one opened again after it ended, if it did.
      const now = this.open.get(key);
      for (const w of new Set(now?.listeners === shared.listeners ? [shared, now] : [shared])) {
        w.closed = true;
        void w.watch.then((x) => x.close(), () => undefined); // a failed open has nothing to close
      }
      if (now?.listeners === shared.listeners) this.open.delete(key);
    };
  }

  /** Opens the watch of `key` for `listeners`, and opens it again whenever it ends while they are there. */
  private openShared(
    key: string, target: WatchTarget, listeners: Set<Listener>, delayMs = REOPEN_MS.first, mirror?: KindMirror,
    reopened = false,
  ): Shared {
    // A whole kind's mirror bootstraps (its events come in one batch, the bootstrapped one included: showAll).
    mirror ??= this.o.mirror && target.id === undefined ? new KindMirror() : undefined;
    mirror?.requested();
    const kind = kindKey(target.namespace, target.type);
    const openedAt = msSinceStart();
    const watch = this.state.watch(
      { namespace: target.namespace, type: target.type, ...(target.id !== undefined ? { id: target.id } : {}) },
      mirror ? { bootstrapContents: true, aggregated: true } : {},
      (events) => {
        if (mirror) {
          mirror.apply(events);
          for (const h of this.applied) h(kind, events, mirror);
        }
        for (const l of [...listeners]) l(events);
      },
      !!mirror,
    );
    const shared: Shared = { listeners, watch, closed: false, reopened, ...(mirror ? { mirror } : {}) };
    /** Opens it again after `delay` (longer each time it ends at once), while it has subscribers. */
    const reopen = (delay: number) => setTimeout(() => {
      if (shared.closed || this.open.get(key) !== shared || !listeners.size) return;
      const next = this.openShared(key, target, listeners, Math.min(delay * 2, REOPEN_MS.max), mirror, true);
      this.open.set(key, next);
      // Its subscribers look again once it is open (a mirror's: once its new bootstrap is in).
      next.watch.then(() => mirror?.whenReady()).then(() => {
        for (const l of [...listeners]) l([], true);
      }, () => undefined); // not open again: openShared tries again itself
    }, delay).unref?.();
    watch.then((w) => w.done.then(() => {
      mirror?.rebuild(); // what comes meanwhile is missed: not read from until a new bootstrap is in
      if (shared.closed || this.open.get(key) !== shared || !listeners.size) return;
      // Ended under its subscribers: open it again (at once again if it had lived long).
      reopen(msSinceStart() - openedAt > REOPEN_MS.max ? REOPEN_MS.first : delayMs);
    }), () => {
      // Not open: a first open fails its subscribers (the next one tries anew); one opened again is tried again
      // while it has subscribers (given up, they would wait for events that never come).
      if (this.open.get(key) !== shared) return;
      if (reopened && listeners.size && !shared.closed) reopen(delayMs);
      else this.open.delete(key);
    });
    return shared;
  }
}
