// shared-watches: one watch on the state per input that a runtime's controllers share.
// In a plugin, several controllers watch the same kinds (the network plugin's sixteen
// controllers have 34 inputs over 19 kinds): each was its own stream to the engine,
// opened one round trip after another at boot, and every event crossed the socket once
// per watcher. Now the first subscriber opens the watch, later ones join it, the last
// one to leave closes it; events reach every subscriber in order.
import { kindKey, type State, type Watch, type WatchEvent } from '../state/state.ts';

export interface WatchTarget { namespace: string; type: string; id?: string }
type Listener = (events: readonly WatchEvent[]) => void;

interface Shared { listeners: Set<Listener>; watch: Promise<Watch> }

export class SharedWatches {
  private readonly open = new Map<string, Shared>();

  constructor(private readonly state: State) {}

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
      const listeners = new Set<Listener>();
      const watch = this.state.watch(
        { namespace: target.namespace, type: target.type, ...(target.id !== undefined ? { id: target.id } : {}) },
        {},
        (events) => { for (const l of [...listeners]) l(events); },
      );
      const created: Shared = { listeners, watch };
      s = created;
      this.open.set(key, created);
      watch.catch(() => {
        if (this.open.get(key) === created) this.open.delete(key);
      });
    }
    const shared = s;
    shared.listeners.add(listener);
    try {
      await shared.watch;
    } catch (e) {
      shared.listeners.delete(listener);
      throw e;
    }
    return () => {
      if (!shared.listeners.delete(listener) || shared.listeners.size) return;
      if (this.open.get(key) === shared) this.open.delete(key);
      void shared.watch.then((w) => w.close(), () => undefined); // a failed open has nothing to close
    };
  }
}
