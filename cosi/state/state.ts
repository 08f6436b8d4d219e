// state: the contract every COSI state implements - the in-memory store, the gRPC
// client, and the per-writer guard used for plugins and controllers. Everything
// else (controllers, the API server, cosictl) talks to this interface only.
import type { Phase, Pointer, Resource } from '../resource/resource.ts';
import type { ResourceFilter } from './query.ts';

export type EventType = 'created' | 'updated' | 'destroyed' | 'bootstrapped' | 'errored' | 'noop';

export interface WatchEvent {
  type: EventType;
  /** The resource after the change; a tombstone for bootstrapped/noop (and errored). */
  resource: Resource;
  /** The resource before an update. */
  old?: Resource;
  error?: string;
  /** Opaque position after this event; resume a watch from it. */
  bookmark?: Uint8Array;
}

export interface WatchOptions extends ResourceFilter {
  /** Kind watch: a created event per existing resource (sorted by id), then bootstrapped. */
  bootstrapContents?: boolean;
  /** Replay the last N events first. */
  tailEvents?: number;
  /** Resume strictly after this bookmark. */
  startFromBookmark?: Uint8Array;
  /** Kind watch: start with a noop event carrying the current bookmark. */
  bootstrapBookmark?: boolean;
  /** Deliver events in batches (bootstrap and bootstrapped in one). */
  aggregated?: boolean;
}

/** What a watch delivers to: a batch of events. Returning a promise applies backpressure. */
export type WatchSink = (events: readonly WatchEvent[]) => void | Promise<void>;

export interface Watch {
  /** Ends the watch; no events are delivered after it returns. */
  close(): void;
  /** Resolves when the watch ends: closed by the caller (undefined) or by an error. */
  readonly done: Promise<Error | undefined>;
}

export interface UpdateOptions {
  owner?: string;
  /** undefined = any phase. */
  expectedPhase?: Phase;
}

export interface State {
  get(p: Pointer): Promise<Resource>;
  list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]>;
  /** The metadata's version/owner/phase/timestamps are set by the state. */
  create(r: Resource, opts?: { owner?: string }): Promise<Resource>;
  /** r.metadata.version must equal the stored version; returns the stored result (version + 1). */
  update(r: Resource, opts?: UpdateOptions): Promise<Resource>;
  destroy(p: Pointer, opts?: { owner?: string }): Promise<void>;
  /** Marks tearing down; resolves true when no finalizers remain. */
  teardown(p: Pointer, opts?: { owner?: string }): Promise<boolean>;
  /** Tears down, waits for finalizers to go, destroys. */
  teardownAndDestroy(p: Pointer, opts?: { owner?: string }): Promise<void>;
  /**
   * Watches one resource (id given) or a kind (id undefined). `showAll` (api_version 1)
   * includes bootstrapped and errored events.
   */
  watch(
    req: { namespace: string; type: string; id?: string }, opts: WatchOptions, sink: WatchSink, showAll?: boolean,
  ): Promise<Watch>;
}

/** Kind key for maps: namespace and type. */
export function kindKey(namespace: string, type: string): string {
  return `${namespace}\u0000${type}`;
}
