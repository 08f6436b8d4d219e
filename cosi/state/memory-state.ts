// memory-state: the in-memory COSI state. One bucket per (namespace, type) holds the
// resources, their event ring and the wake-ups of its watchers. All writes are
// synchronous inside one tick, so every reader sees a consistent bucket.
import type { Pointer, Resource } from '../resource/resource.ts';
import { OpaqueSpec, pointerString } from '../resource/resource.ts';
import { BookmarkCodec } from './bookmark.ts';
import { StateError } from './errors.ts';
import { Bucket } from './bucket.ts';
import { copyResource, deepFreeze } from './freeze.ts';
import { compileFilter, type ResourceFilter } from './query.ts';
import { kindKey, type State, type UpdateOptions, type Watch, type WatchOptions, type WatchSink } from './state.ts';
import { runWatch } from './watch-runner.ts';

export interface MemoryStateOptions {
  /** Events kept per (namespace, type) for tails, bookmarks and slow watchers. */
  historyCapacity?: number;
  /** Brings each stored spec to its type's object form (the type's codec); identity by default. */
  normalize?: (type: string, spec: unknown) => unknown;
  /** Clock (ms); tests pin it. */
  now?: () => number;
}

function checkPointer(p: Pointer, what: string): void {
  for (const k of ['namespace', 'type', 'id'] as const) {
    if (typeof p[k] !== 'string' || p[k] === '') {
      throw new StateError('invalid-argument', `${what}: metadata.${k} is empty`, pointerString(p));
    }
  }
}

function checkOwner(cur: Resource, owner: string | undefined, op: string): void {
  const want = owner ?? '';
  if (cur.metadata.owner !== want) {
    throw new StateError('owner-conflict',
      `${op} ${pointerString(cur.metadata)}: owned by "${cur.metadata.owner}", not "${want}"`,
      pointerString(cur.metadata));
  }
}

/** How many destroyed ids' creation times the state keeps before it lets the old ones go. */
const DESTROYED_KEPT = 1024;

export class MemoryState implements State {
  private readonly buckets = new Map<string, Bucket>();
  private readonly capacity: number;
  private readonly now: () => number;
  /** The `created` of ids destroyed and not created again (by kind and id), the recent ones. */
  private readonly destroyedCreated = new Map<string, number>();
  private readonly normalize: (type: string, spec: unknown) => unknown;
  readonly bookmarks = new BookmarkCodec();

  constructor(o: MemoryStateOptions = {}) {
    this.capacity = o.historyCapacity ?? 1000;
    this.now = o.now ?? Date.now;
    this.normalize = o.normalize ?? ((_t, spec) => spec);
  }

  private stored(r: Resource): unknown {
    return r.spec === null || r.spec === undefined || r.spec instanceof OpaqueSpec
      ? r.spec
      : this.normalize(r.metadata.type, r.spec);
  }

  bucket(namespace: string, type: string): Bucket {
    const key = kindKey(namespace, type);
    let b = this.buckets.get(key);
    if (!b) {
      b = new Bucket(namespace, type, this.bookmarks.kindHash(key), this.capacity);
      this.buckets.set(key, b);
    }
    return b;
  }

  private current(p: Pointer, op: string): Resource {
    const r = this.buckets.get(kindKey(p.namespace, p.type))?.resources.get(p.id);
    if (!r) throw new StateError('not-found', `${op}: resource ${pointerString(p)} doesn't exist`, pointerString(p));
    return r;
  }

  /** Synchronous get for in-process readers (the API server's hot path). */
  getSync(p: Pointer): Resource { return this.current(p, 'get'); }

  /** getSync, or undefined when the resource is not there. */
  findSync(p: Pointer): Resource | undefined {
    return this.buckets.get(kindKey(p.namespace, p.type))?.resources.get(p.id);
  }

  /** How many resources of `type` there are, in every namespace, or in `namespace` of every type. */
  count(where: { type?: string; namespace?: string }): number {
    let n = 0;
    for (const b of this.buckets.values()) {
      if ((where.type === undefined || b.type === where.type)
        && (where.namespace === undefined || b.namespace === where.namespace)) n += b.resources.size;
    }
    return n;
  }

  /** How many resources no controller owns there are, in the types `keepType` accepts (one step per kind). */
  countUnowned(keepType: (type: string) => boolean): number {
    let n = 0;
    for (const b of this.buckets.values()) if (b.unowned && keepType(b.type)) n += b.unowned;
    return n;
  }

  /** The types `keepType` accepts of which some resource has no owner (users' own): counted per kind, not walked. */
  unownedTypes(keepType: (type: string) => boolean): string[] {
    const out = new Set<string>();
    for (const b of this.buckets.values()) if (b.unowned && keepType(b.type)) out.add(b.type);
    return [...out];
  }

  /** Every resource of every kind that `keep` accepts (the engine's machine config: what users own). */
  resourcesWhere(keep: (r: Resource) => boolean): Resource[] {
    const out: Resource[] = [];
    for (const b of this.buckets.values()) for (const r of b.resources.values()) if (keep(r)) out.push(r);
    return out;
  }

  async get(p: Pointer): Promise<Resource> { return this.current(p, 'get'); }

  listSync(kind: { namespace: string; type: string }, filter?: ResourceFilter): Resource[] {
    const match = compileFilter(filter);
    const all = this.buckets.get(kindKey(kind.namespace, kind.type))?.sortedResources() ?? [];
    return filter && (filter.idQuery || filter.labelQueries?.length)
      ? all.filter((r) => match(r.metadata.id, r.metadata.labels))
      : all.slice();
  }

  async list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]> {
    return this.listSync(kind, filter);
  }

  async create(r: Resource, opts: { owner?: string } = {}): Promise<Resource> {
    checkPointer(r.metadata, 'create');
    const b = this.bucket(r.metadata.namespace, r.metadata.type);
    if (b.resources.has(r.metadata.id)) {
      throw new StateError('already-exists', `create: resource ${pointerString(r.metadata)} already exists`,
        pointerString(r.metadata));
    }
    // An incarnation of an id is created later than the one before it (a plugin's mirror tells them apart by it:
    // controllers/mirrored-state.ts), even within a millisecond or with the clock stepped back.
    const key = `${kindKey(r.metadata.namespace, r.metadata.type)}\u0000${r.metadata.id}`;
    const now = Math.max(this.now(), (this.destroyedCreated.get(key) ?? -Infinity) + 1);
    this.destroyedCreated.delete(key);
    const c = copyResource(r);
    const stored = deepFreeze<Resource>({
      metadata: { ...c.metadata, version: 1, owner: opts.owner ?? '', phase: 'running', created: now, updated: now },
      spec: this.stored(c),
    });
    b.record({ type: 'created', resource: stored });
    return stored;
  }

  async update(r: Resource, opts: UpdateOptions = {}): Promise<Resource> {
    checkPointer(r.metadata, 'update');
    const cur = this.current(r.metadata, 'update');
    checkOwner(cur, opts.owner, 'update');
    if (r.metadata.version !== cur.metadata.version) {
      throw new StateError('version-conflict',
        `update ${pointerString(cur.metadata)}: version ${r.metadata.version} `
          + `is not the current ${cur.metadata.version}`,
        pointerString(cur.metadata));
    }
    if (opts.expectedPhase !== undefined && cur.metadata.phase !== opts.expectedPhase) {
      throw new StateError('phase-conflict',
        `update ${pointerString(cur.metadata)}: phase is ${cur.metadata.phase}, expected ${opts.expectedPhase}`,
        pointerString(cur.metadata));
    }
    const c = copyResource(r);
    const stored = deepFreeze<Resource>({
      metadata: {
        ...c.metadata, owner: cur.metadata.owner, created: cur.metadata.created, version: cur.metadata.version + 1,
        updated: Math.max(this.now(), cur.metadata.created),
        phase: c.metadata.phase === 'tearingDown' ? 'tearingDown' : 'running',
      },
      spec: this.stored(c),
    });
    this.bucket(cur.metadata.namespace, cur.metadata.type).record({ type: 'updated', resource: stored, old: cur });
    return stored;
  }

  async destroy(p: Pointer, opts: { owner?: string } = {}): Promise<void> {
    const cur = this.current(p, 'destroy');
    checkOwner(cur, opts.owner, 'destroy');
    if (cur.metadata.finalizers.length) {
      throw new StateError('pending-finalizers',
        `destroy ${pointerString(p)}: finalizers pending: ${cur.metadata.finalizers.join(', ')}`, pointerString(p));
    }
    this.bucket(p.namespace, p.type).record({ type: 'destroyed', resource: cur });
    const now = this.now();
    if (this.destroyedCreated.size >= DESTROYED_KEPT) {
      // Only what could be created again within the clock's resolution matters: the old ones go.
      for (const [k, c] of this.destroyedCreated) if (c < now - 1000) this.destroyedCreated.delete(k);
    }
    this.destroyedCreated.set(`${kindKey(p.namespace, p.type)}\u0000${p.id}`, cur.metadata.created);
  }

  async teardown(p: Pointer, opts: { owner?: string } = {}): Promise<boolean> {
    const cur = this.current(p, 'teardown');
    checkOwner(cur, opts.owner, 'teardown');
    if (cur.metadata.phase === 'running') {
      const stored = deepFreeze<Resource>({
        metadata: {
          ...cur.metadata, phase: 'tearingDown', version: cur.metadata.version + 1,
          updated: Math.max(this.now(), cur.metadata.created),
        },
        spec: cur.spec,
      });
      this.bucket(p.namespace, p.type).record({ type: 'updated', resource: stored, old: cur });
      return stored.metadata.finalizers.length === 0;
    }
    return cur.metadata.finalizers.length === 0;
  }

  async teardownAndDestroy(p: Pointer, opts: { owner?: string } = {}): Promise<void> {
    if (await this.teardown(p, opts)) return this.destroy(p, opts);
    const b = this.bucket(p.namespace, p.type);
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        const cur = b.resources.get(p.id);
        if (!cur) {
          b.wakers.delete(check);
          reject(new StateError('not-found', `teardown and destroy: ${pointerString(p)} was destroyed by someone else`,
            pointerString(p)));
          return;
        }
        if (cur.metadata.finalizers.length === 0) {
          b.wakers.delete(check);
          resolve();
        }
      };
      b.wakers.add(check);
    });
    return this.destroy(p, opts);
  }

  async watch(
    req: { namespace: string; type: string; id?: string }, opts: WatchOptions, sink: WatchSink, showAll = false,
  ): Promise<Watch> {
    return runWatch(this.bookmarks, this.bucket(req.namespace, req.type), req.id, opts, sink, showAll);
  }
}
