// shared-decodes: watch messages decoded once per process. The server sends the same
// bytes to every watcher of a kind (it frames a shared event once), and a process often
// has several such watchers (controllers of one plugin, a benchmark's hundred): the
// first to receive a message decodes it, the rest get the same frozen events, as the
// memory state hands every watcher the same immutable resource.
import type { WatchEvent } from '../state/state.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';

interface Entry { bytes: Uint8Array; codecs: SpecCodecs; events: readonly WatchEvent[] }

/** Larger messages (a bootstrap of a whole kind) are decoded for each watch, not kept. */
const MAX_SHARED_BYTES = 16 * 1024;
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0;

export class SharedDecodes {
  private readonly entries: Entry[] = [];

  constructor(private readonly size = 8) {}

  /** The events of `bytes` (decoded with `codecs`), from a recent identical message when there is one. */
  get(
    bytes: Uint8Array, codecs: SpecCodecs, decode: (bytes: Uint8Array) => readonly WatchEvent[],
  ): readonly WatchEvent[] {
    for (const e of this.entries) if (e.codecs === codecs && sameBytes(e.bytes, bytes)) return e.events;
    const events = Object.freeze(decode(bytes));
    if (bytes.length > MAX_SHARED_BYTES) return events;
    if (this.entries.length >= this.size) this.entries.shift();
    // A copy: the message may be a view into a larger read buffer.
    this.entries.push({ bytes: Uint8Array.prototype.slice.call(bytes), codecs, events });
    return events;
  }
}

/** The one cache of this process (every RemoteState's watches share it). */
export const sharedDecodes = new SharedDecodes();
