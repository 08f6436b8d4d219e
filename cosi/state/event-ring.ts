// event-ring: the bounded history of one (namespace, type). Events are numbered
// from 1; the ring keeps the last `capacity`. Watchers remember the next number they
// want and read forward; one that falls more than `capacity` behind has overrun.
import type { Resource } from '../resource/resource.ts';

export interface StoredEvent {
  seq: number;
  type: 'created' | 'updated' | 'destroyed';
  resource: Resource;
  old?: Resource;
}

export class EventRing {
  private readonly slots: (StoredEvent | undefined)[];
  /** Number the next appended event gets. */
  next = 1;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`event ring capacity must be a positive integer, got ${capacity}`);
    }
    this.slots = new Array<StoredEvent | undefined>(capacity);
  }

  /** Oldest event number still held. */
  get oldest(): number {
    return Math.max(1, this.next - this.capacity);
  }

  append(e: Omit<StoredEvent, 'seq'>): StoredEvent {
    const ev = { ...e, seq: this.next++ };
    this.slots[ev.seq % this.capacity] = ev;
    return ev;
  }

  /** The event numbered `seq`, or undefined if it is not (or no longer) held. */
  at(seq: number): StoredEvent | undefined {
    if (seq < this.oldest || seq >= this.next) return undefined;
    return this.slots[seq % this.capacity];
  }
}
