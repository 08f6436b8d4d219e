// bucket: one (namespace, type) of the memory state: its resources by id, the ring of its recent events, and the
// watchers to wake after each write. The memory state owns the buckets; each watch reads one (watch-runner.ts).
import type { Resource } from '../resource/resource.ts';
import { tombstone } from '../resource/resource.ts';
import { EventRing, type StoredEvent } from './event-ring.ts';

export class Bucket {
  readonly resources = new Map<string, Resource>();
  readonly ring: EventRing;
  /** Called once after each write (watchers, waits for finalizers), in a microtask: never inside the writer's call. */
  readonly wakers = new Set<() => void>();
  /** Resources no controller owns (users' own), kept as writes happen: counting them needs no walk. */
  unowned = 0;
  private sorted: Resource[] | null = null;
  private wakeQueued = false;
  private readonly wakeAll = () => {
    this.wakeQueued = false;
    for (const w of this.wakers) w();
  };

  constructor(readonly namespace: string, readonly type: string, readonly hash: Buffer, capacity: number) {
    this.ring = new EventRing(capacity);
  }

  /** Resources sorted by id; cached until the next create or destroy. */
  sortedResources(): Resource[] {
    if (!this.sorted) {
      this.sorted = [...this.resources.values()]
        .sort(byId);
    }
    return this.sorted;
  }

  record(e: Omit<StoredEvent, 'seq'>): void {
    const id = e.resource.metadata.id;
    const before = this.resources.get(id);
    if (before && before.metadata.owner === '') this.unowned--;
    if (e.type === 'updated') {
      this.resources.set(id, e.resource);
      if (this.sorted) this.sorted = null;
    }
    else if (e.type === 'created') {
      this.resources.set(id, e.resource);
      this.sorted = null;
    }
    else {
      this.resources.delete(id);
      this.sorted = null;
    }
    if (e.type !== 'destroyed' && e.resource.metadata.owner === '') this.unowned++;
    this.ring.append(e);
    if (!this.wakeQueued && this.wakers.size) {
      this.wakeQueued = true;
      queueMicrotask(this.wakeAll);
    }
  }

  /** The resource that stands for the whole kind in bootstrap and noop events. */
  kindTombstone(): Resource { return tombstone({ namespace: this.namespace, type: this.type, id: '' }); }
}

/** The order a kind's resources are listed in: by id, as strings compare. */
export function byId(a: Resource, b: Resource): number {
  return a.metadata.id < b.metadata.id ? -1 : a.metadata.id > b.metadata.id ? 1 : 0;
}
