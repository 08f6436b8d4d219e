// kind-mirror: a kind's resources as one watch has delivered them (its bootstrap, then every change), so that a
// plugin's controllers read them without a round trip to the engine (mirrored-state.ts). A watch opened again
// after it ended bootstraps again: the mirror is rebuilt from that bootstrap and is not ready meanwhile.
import type { Resource } from '../resource/resource.ts';
import { deepFreeze } from '../state/freeze.ts';
import type { WatchEvent } from '../state/state.ts';

export class KindMirror {
  private current = new Map<string, Resource>();
  /** `current` sorted by id, until it changes. */
  private ordered: Resource[] | undefined;
  /** The bootstrap under way: what it has delivered so far (undefined once it is done). */
  private building: Map<string, Resource> | undefined = new Map();
  private resolveReady!: () => void;
  /** Resolves at the end of the first bootstrap. */
  readonly ready = new Promise<void>((r) => {
    this.resolveReady = r;
  });

  /** Whether the mirror holds the kind as the state had it at some moment since (not during a rebuild). */
  get isReady(): boolean { return this.building === undefined; }

  /** The watch was opened again: a bootstrap follows. */
  rebuild(): void {
    this.building = new Map();
  }

  /** Applies a batch the watch delivered (with bootstrapped events: the watch's showAll). */
  apply(events: readonly WatchEvent[]): void {
    for (const e of events) {
      if (e.type === 'bootstrapped') {
        if (!this.building) continue;
        this.current = this.building;
        this.building = undefined;
        this.ordered = undefined;
        this.resolveReady();
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
    this.ordered ??= [...this.current.values()].sort((a, b) => byId(a.metadata.id, b.metadata.id));
    return this.ordered;
  }
}

function byId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
