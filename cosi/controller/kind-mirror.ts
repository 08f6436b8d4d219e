// kind-mirror: a kind's resources as one watch has delivered them (its bootstrap, then every change), so that a
// plugin's controllers read them without a round trip to the engine (mirrored-state.ts). A watch that ended, or
// said it fell behind (an errored event: buffer overrun), is rebuilt from the bootstrap of the watch opened again,
// and is not ready meanwhile.
import type { Resource } from '../resource/resource.ts';
import { byId } from '../state/bucket.ts';
import { deepFreeze } from '../state/freeze.ts';
import type { WatchEvent } from '../state/state.ts';
import { msSinceStart } from '../monotonic.ts';

export class KindMirror {
  private current = new Map<string, Resource>();
  /** `current` sorted by id, until it changes. */
  private ordered: Resource[] | undefined;
  /** The bootstrap under way: what it has delivered so far (undefined once it is done). */
  private building: Map<string, Resource> | undefined = new Map();
  private waiters: (() => void)[] = [];
  /** When the watch whose bootstrap is under way was asked for (msSinceStart). */
  private askedAt = msSinceStart();
  /**
   * When the watch whose bootstrap the mirror holds was asked for: a write answered before then is in its snapshot
   * (the engine takes it as it sets the watch up, after the request).
   */
  snapshotBy = -Infinity;

  /** Whether the mirror holds the kind as the state had it at some moment since (not during a rebuild). */
  get isReady(): boolean { return this.building === undefined; }

  /** Resolves when the mirror is ready (at once, or at the end of the bootstrap under way). */
  whenReady(): Promise<void> {
    if (this.isReady) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  /** The watch ended or fell behind: what comes until a new bootstrap is missed. */
  rebuild(): void {
    this.building = new Map();
  }

  /** A watch (of which a bootstrap comes) is asked for now. */
  requested(at = msSinceStart()): void {
    this.askedAt = at;
  }

  /** Applies a batch the watch delivered (with bootstrapped and errored events: the watch's showAll). */
  apply(events: readonly WatchEvent[]): void {
    for (const e of events) {
      if (e.type === 'errored') {
        this.rebuild();
        continue;
      }
      if (e.type === 'bootstrapped') {
        if (!this.building) continue;
        this.current = this.building;
        this.building = undefined;
        this.ordered = undefined;
        this.snapshotBy = this.askedAt;
        for (const w of this.waiters.splice(0)) w();
        continue;
      }
      const into = this.building ?? this.current;
      if (!this.building) this.ordered = undefined;
      const id = e.resource.metadata.id;
      if (e.type === 'created' || e.type === 'updated') into.set(id, deepFreeze(e.resource));
      else if (e.type === 'destroyed') into.delete(id);
    }
  }

  get(id: string): Resource | undefined { return this.current.get(id); }

  /** Every resource, sorted by id (as the state lists them). */
  sorted(): readonly Resource[] {
    this.ordered ??= [...this.current.values()].sort(byId);
    return this.ordered;
  }
}
