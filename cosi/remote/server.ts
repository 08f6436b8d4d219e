// server: serves any State as cosi.resource.State (the methods of our gRPC server,
// grpc/server.ts). An access hook decides per call what the caller may read and write
// (users: their role; plugins: their declared outputs); an admission hook sees each
// resource a client creates or updates before it is stored. Whatever else wraps a call
// (who may call at all, the audit log, quotas) wraps the methods from outside: this
// service knows nothing of roles or audits (request-pointer.ts tells a wrapper what a
// call names).
import type { Pointer, Resource } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import type { State, WatchEvent } from '../state/state.ts';
import { FairTurns } from './fair-turns.ts';
import {
  DEFAULT_SPEC_LIMITS, eventToWire, labelQueriesFromWire, resourceFromWire, resourceToWire, watchOptionsFromWire,
  type SpecLimits, type WireResource, type WireWatchOptions,
} from './codec.ts';
import { frame } from './grpc/framing.ts';
import type { CallContext, Method } from './grpc/server.ts';
import { decode, encode, has, preEncoded, type MessageName } from './wire.ts';
import { STATE_METHODS, type StateMethod } from './service.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';
import { sameSpec } from '../spec/spec-equal.ts';

/** A write as the access hook sees it. */
export interface WriteIntent {
  type: string;
  /** The owner the caller writes as ("" for users; a controller's name for plugins). */
  owner: string;
  /** An Update that changes nothing but the finalizers (a dependant holding or letting go). */
  finalizersOnly: boolean;
  /** The spec written (a Create's or an Update's; none for a removal). */
  spec?: unknown;
}

/** What one connection may do; each method throws permission-denied, saying why. */
export interface CallAccess {
  read(type: string): void;
  write(w: WriteIntent): void;
}

/** What a writer's resource and a reader's query may be (read per call: the engine's limits may change). */
export interface RequestLimits {
  spec: SpecLimits;
  /** Labels and annotations of one resource, together. */
  maxLabels: number;
  /** Their keys and values, in bytes. */
  maxLabelBytes: number;
  /** Label terms of a List's or Watch's queries, together. */
  maxQueryTerms: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = {
  spec: DEFAULT_SPEC_LIMITS, maxLabels: 256, maxLabelBytes: 256 << 10, maxQueryTerms: 64,
};

export interface StateServerOptions {
  /** Limits of requests (default DEFAULT_REQUEST_LIMITS). */
  limits?: () => RequestLimits;
  /**
   * What the connection a call came on may do; none = anything. A hook, not a wrapper around the method: a
   * Create's or an Update's type is known once its resource is decoded and checked (whose errors come first),
   * and whether an Update changes nothing but finalizers once the stored resource is read, both in here.
   */
  accessOf?: (ctx: CallContext) => CallAccess;
  /** How specs travel and are checked, per type (a type it does not know is free-form YAML). */
  codecs: SpecCodecs;
  /** A resource a client creates or updates, as it is to be stored; throws to refuse it (unknown type, namespace). */
  admit?: (r: Resource, op: 'create' | 'update') => Resource;
  /** Throws to refuse a Destroy or Teardown (a built-in definition). */
  admitRemoval?: (p: Pointer) => void;
  /**
   * The type a request's type name stands for: a renamed type's former name is served as the type (its
   * definition's formerTypes), before access is checked; any other name is itself.
   */
  currentType?: (type: string) => string;
}

interface TypedRequest {
  type?: string;
  resource?: WireResource;
  new_resource?: WireResource;
}

/** Field 1 (resource) of Get/List/Create/UpdateResponse, wrapped around an encoded Resource. */
/** A WatchResponse of `events`, their resources given as the bytes the server keeps of each. */
export function encodeWatchResponse(events: readonly WatchEvent[], resourceBytes: (r: Resource) => Buffer): Buffer {
  return encode('WatchResponse', { event: events.map((e) => eventToWire(e, (r) => preEncoded(resourceBytes(r)))) });
}

/** True when `next` differs from `cur` in its finalizers alone. */
function finalizersOnly(cur: Resource, next: Resource): boolean {
  const m = cur.metadata;
  const n = next.metadata;
  return m.owner === n.owner && m.phase === n.phase && sameSpec(m.labels, n.labels)
    && sameSpec(m.annotations, n.annotations) && sameSpec(cur.spec, next.spec);
}

interface PointerRequest { namespace: string; type: string; id: string; options?: { owner?: string } }
const ptr = (r: PointerRequest): Pointer => ({ namespace: r.namespace, type: r.type, id: r.id });

/** The methods of cosi.resource.State over `state`, by path, for grpc/server.ts. */
export function stateMethods(state: State, o: StateServerOptions): Map<string, Method> {
  // Stored resources are immutable, so their encoding can be kept with them.
  const encoded = new WeakMap<Resource, Buffer>();
  const resourceBytes = (r: Resource): Buffer => {
    let b = encoded.get(r);
    if (!b) {
      b = encode('Resource', resourceToWire(r, o.codecs));
      encoded.set(r, b);
    }
    return b;
  };
  // Get's, Create's and Update's responses: { Resource resource = 1 }, around the bytes kept.
  const response = (r: Resource) => encode('GetResponse', { resource: preEncoded(resourceBytes(r)) });
  // An event most watchers share (the state hands them the same object) is encoded and framed once.
  const eventFrames = new WeakMap<WatchEvent, Buffer>();
  const watchResponse = (events: readonly WatchEvent[]): Buffer => {
    if (events.length !== 1) return frame(encodeWatchResponse(events, resourceBytes));
    let b = eventFrames.get(events[0]!);
    if (!b) {
      b = frame(encodeWatchResponse(events, resourceBytes));
      eventFrames.set(events[0]!, b);
    }
    return b;
  };
  const admit = (r: Resource, op: 'create' | 'update') => (o.admit ? o.admit(r, op) : r);
  /** A request with the types it names brought to their current names. */
  const retyped = <T>(req: T): T => {
    const now = o.currentType;
    if (!now) return req;
    const r = req as TypedRequest;
    if (r.type) r.type = now(r.type);
    for (const w of [r.resource, r.new_resource]) if (w?.metadata?.type) w.metadata.type = now(w.metadata.type);
    return req;
  };
  const watchTurns = new FairTurns<unknown>();
  const limits = () => o.limits?.() ?? DEFAULT_REQUEST_LIMITS;
  const fromWire = (w: WireResource | undefined, where: string) => {
    const l = limits();
    const m = w?.metadata;
    const entries = [...Object.entries(m?.labels ?? {}), ...Object.entries(m?.annotations ?? {})];
    if (entries.length > l.maxLabels) {
      throw new StateError('resource-exhausted', `${where}: ${entries.length} labels and annotations, at most `
        + `${l.maxLabels} (ApiLimits maxLabels)`);
    }
    const bytes = entries.reduce((n, [k, v]) => n + k.length + v.length, 0);
    if (bytes > l.maxLabelBytes) {
      throw new StateError('resource-exhausted', `${where}: labels and annotations of ${bytes} bytes, at most `
        + `${l.maxLabelBytes} (ApiLimits maxLabelBytes)`);
    }
    return resourceFromWire(w ?? {}, o.codecs, { where, admit: true, limits: l.spec });
  };
  const queries = (qs: { terms: unknown[] }[] | undefined, where: string) => {
    const terms = (qs ?? []).reduce((n, q) => n + (q.terms?.length ?? 0), 0);
    if (terms > limits().maxQueryTerms) {
      throw new StateError('resource-exhausted', `${where}: ${terms} label terms, at most ${limits().maxQueryTerms} `
        + '(ApiLimits maxQueryTerms)');
    }
    return labelQueriesFromWire(qs as never);
  };
  const accessOf = (ctx: CallContext) => o.accessOf?.(ctx);
  const removal = (ctx: CallContext, req: PointerRequest) => {
    const p = ptr(req);
    accessOf(ctx)?.write({ type: p.type, owner: req.options?.owner ?? '', finalizersOnly: false });
    o.admitRemoval?.(p);
    return p;
  };

  const unary = <Req>(
    name: StateMethod, fn: (req: Req, ctx: CallContext) => Promise<Uint8Array | object>,
  ): [string, Method] => {
    const def = STATE_METHODS[name];
    return [def.path, {
      kind: 'unary',
      handle: async (bytes, ctx) => {
        const req = retyped(decodeRequest<Req>(def.request, bytes));
        const res = await fn(req, ctx);
        return res instanceof Uint8Array ? res : encode(def.response, res);
      },
    }];
  };

  return new Map<string, Method>([
    unary('Get', async (req: PointerRequest, ctx) => {
      accessOf(ctx)?.read(req.type);
      return response(await state.get(ptr(req)));
    }),

    [STATE_METHODS.List.path, {
      kind: 'server-stream',
      async handle(bytes, ctx, out) {
        const req = retyped(decodeRequest<{
          namespace: string; type: string; options?: { label_query: never[]; id_query?: { regexp: string } };
        }>('ListRequest', bytes));
        accessOf(ctx)?.read(req.type);
        const list = await state.list({ namespace: req.namespace, type: req.type }, {
          labelQueries: queries(req.options?.label_query, 'list'),
          ...(req.options?.id_query?.regexp ? { idQuery: req.options.id_query.regexp } : {}),
        });
        for (const r of list) {
          if (ctx.signal.aborted) return;
          const wait = out.write(response(r));
          if (wait) await wait;
        }
      },
    }],

    unary('Create', async (
      req: { resource?: WireResource; options?: { owner: string } }, ctx,
    ) => {
      const r = fromWire(req.resource, 'create');
      accessOf(ctx)?.write({
        type: r.metadata.type, owner: req.options?.owner ?? '', finalizersOnly: false, spec: r.spec,
      });
      return response(await state.create(admit(r, 'create'), { owner: req.options?.owner ?? '' }));
    }),

    unary('Update', async (
      req: { new_resource?: WireResource; options?: { owner: string; expected_phase?: string } }, ctx,
    ) => {
      const r = fromWire(req.new_resource, 'update');
      // A controller holds its strong inputs with finalizers: an update that changes nothing but the
      // finalizers is a lesser write (allowed on any type a caller may hold), told apart here.
      const access = accessOf(ctx);
      if (access) {
        const current = await state.get(r.metadata);
        access.write({
          type: r.metadata.type, owner: req.options?.owner ?? '', finalizersOnly: finalizersOnly(current, r),
          spec: r.spec,
        });
      }
      const admitted = admit(r, 'update');
      const o2 = req.options;
      let expectedPhase: 'running' | 'tearingDown' | undefined;
      if (o2 && has(o2, 'expected_phase')) {
        if (o2.expected_phase !== 'running' && o2.expected_phase !== 'tearingDown') {
          throw new StateError('invalid-argument', `unknown expected phase "${o2.expected_phase}"`, o2.expected_phase);
        }
        expectedPhase = o2.expected_phase;
      }
      return response(await state.update(admitted, {
        owner: o2?.owner ?? '', ...(expectedPhase ? { expectedPhase } : {}),
      }));
    }),

    unary('Destroy', async (req: PointerRequest, ctx) => {
      await state.destroy(removal(ctx, req), { owner: req.options?.owner ?? '' });
      return {};
    }),
    unary('Teardown', async (req: PointerRequest, ctx) => ({
      destroy_ready: await state.teardown(removal(ctx, req), { owner: req.options?.owner ?? '' }),
    })),
    unary('TeardownAndDestroy', async (req: PointerRequest, ctx) => {
      await state.teardownAndDestroy(removal(ctx, req), { owner: req.options?.owner ?? '' });
      return {};
    }),

    [STATE_METHODS.Watch.path, {
      kind: 'server-stream',
      async handle(bytes, ctx, out) {
        const req = retyped(decodeRequest<{
          namespace: string; type: string; id?: string; options?: WireWatchOptions; api_version: number;
        }>('WatchRequest', bytes));
        accessOf(ctx)?.read(req.type);
        // The sink waits at this gate until the empty first response is out; the watch
        // awaits each sink call that returns a promise (a slow client), so events keep
        // their order without a side buffer. Past the gate an event is written at once.
        let openGate!: () => void;
        let open = false;
        const gate = new Promise<void>((r) => {
          openGate = () => {
            open = true;
            r();
          };
        });
        const send = (events: readonly WatchEvent[]): Promise<void> | undefined => {
          if (!open) return gate.then(() => send(events));
          if (ctx.signal.aborted) return undefined;
          return out.writeFramedNow(watchResponse(events));
        };
        // The setup and the bootstrap in a turn of their own (fair-turns.ts): a flood of watches takes turns.
        const release = await watchTurns.take(ctx.session);
        let watch: Awaited<ReturnType<State['watch']>>;
        try {
          if (ctx.signal.aborted) return;
          watch = await state.watch(
            { namespace: req.namespace, type: req.type, ...(has(req, 'id') ? { id: req.id! } : {}) },
            { ...watchOptionsFromWire(req.options), labelQueries: queries(req.options?.label_query, 'watch') },
            send,
            req.api_version >= 1,
          );
          ctx.signal.addEventListener('abort', () => watch.close(), { once: true });
          // Rule 1: one empty response as soon as the watch is set up, before any event.
          out.write(encode('WatchResponse', {}));
          await out.flush();
          openGate();
          // The bootstrap is written by the microtasks the gate set off; the turn ends after them.
          await new Promise((r) => setImmediate(r));
        } finally { release(); }
        const err = await watch.done;
        if (err && !ctx.signal.aborted) throw err;
      },
    }],
  ]);
}

function decodeRequest<T>(name: MessageName, bytes: Uint8Array): T {
  try {
    return decode<T>(name, bytes);
  } catch (e) {
    throw new StateError('invalid-argument', `the request is not a ${name}: ${(e as Error).message}`, name,
      { cause: e });
  }
}
