// server: serves any State as cosi.resource.State (the methods of our gRPC server,
// grpc/server.ts). A writer guard can restrict which types a connection may write
// (plugins: their declared outputs), and an admission hook sees each resource a client
// creates or updates before it is stored.
import type { Pointer, Resource } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import type { State, WatchEvent } from '../state/state.ts';
import protobuf from 'protobufjs';
import {
  labelQueriesFromWire, resourceFromWire, resourceToWire, watchOptionsFromWire, type WireResource,
  type WireWatchOptions,
} from './codec.ts';
import { frame } from './grpc/framing.ts';
import type { CallContext, Method } from './grpc/server.ts';
import { decode, encode, has, type MessageName } from './proto.ts';
import { STATE_METHODS, type StateMethod } from './service.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';
import { sameSpec } from '../spec/spec-equal.ts';

export interface WriteGuard {
  /** Throws permission-denied (naming the writer) if this connection may not write `type`. */
  check(type: string): void;
}

export interface StateServerOptions {
  /** The write guard of the connection a call came on (plugins: their outputs); none = may write anything. */
  guardOf?: (ctx: CallContext) => WriteGuard | undefined;
  /** How specs travel and are checked, per type (a type it does not know is free-form YAML). */
  codecs: SpecCodecs;
  /** A resource a client creates or updates, as it is to be stored; throws to refuse it (unknown type, namespace). */
  admit?: (r: Resource, op: 'create' | 'update') => Resource;
  /** Throws to refuse a Destroy or Teardown (a built-in definition). */
  admitRemoval?: (p: Pointer) => void;
}

/** Field 1 (resource) of Get/List/Create/UpdateResponse, wrapped around an encoded Resource. */
function wrapField1(inner: Buffer): Buffer {
  return Buffer.from(protobuf.Writer.create().uint32(0x0a).bytes(inner).finish());
}

const EVENT_NUMBER: Record<WatchEvent['type'], number> = {
  created: 0, updated: 1, destroyed: 2, bootstrapped: 3, errored: 4, noop: 5,
};

/**
 * A WatchResponse framed by hand around already-encoded resources: every watcher of
 * a change shares one encoding of the resource instead of encoding it again.
 *   WatchResponse { repeated Event event = 1 }
 *   Event { Resource resource = 1; EventType event_type = 2; Resource old = 3; optional string error = 4;
 *           optional bytes bookmark = 5 }
 */
export function encodeWatchResponse(events: readonly WatchEvent[], resourceBytes: (r: Resource) => Buffer): Buffer {
  const w = protobuf.Writer.create();
  for (const e of events) {
    const ev = protobuf.Writer.create();
    ev.uint32(0x0a).bytes(resourceBytes(e.resource));
    ev.uint32(0x10).uint32(EVENT_NUMBER[e.type]);
    if (e.old) ev.uint32(0x1a).bytes(resourceBytes(e.old));
    if (e.error !== undefined) ev.uint32(0x22).string(e.error);
    if (e.bookmark) ev.uint32(0x2a).bytes(e.bookmark);
    w.uint32(0x0a).bytes(ev.finish());
  }
  return Buffer.from(w.finish());
}

/** True when `next` differs from `cur` in its finalizers alone. */
function finalizersOnly(cur: Resource, next: Resource): boolean {
  const m = cur.metadata; const n = next.metadata;
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
    if (!b) { b = encode('Resource', resourceToWire(r, o.codecs)); encoded.set(r, b); }
    return b;
  };
  const response = (r: Resource) => wrapField1(resourceBytes(r));
  // An event most watchers share (the state hands them the same object) is encoded and framed once.
  const eventFrames = new WeakMap<WatchEvent, Buffer>();
  const watchResponse = (events: WatchEvent[]): Buffer => {
    if (events.length !== 1) return frame(encodeWatchResponse(events, resourceBytes));
    let b = eventFrames.get(events[0]!);
    if (!b) { b = frame(encodeWatchResponse(events, resourceBytes)); eventFrames.set(events[0]!, b); }
    return b;
  };
  const admit = (r: Resource, op: 'create' | 'update') => (o.admit ? o.admit(r, op) : r);
  const fromWire = (w: WireResource | undefined, where: string) =>
    resourceFromWire(w ?? {}, o.codecs, { where, admit: true });
  const checkWrite = (ctx: CallContext, type: string) => o.guardOf?.(ctx)?.check(type);
  const removal = (ctx: CallContext, req: PointerRequest) => {
    const p = ptr(req); checkWrite(ctx, p.type); o.admitRemoval?.(p); return p;
  };

  const unary = <Req>(
    name: StateMethod, fn: (req: Req, ctx: CallContext) => Promise<Uint8Array | object>,
  ): [string, Method] => {
    const def = STATE_METHODS[name];
    return [def.path, {
      kind: 'unary',
      handle: async (bytes, ctx) => {
        const res = await fn(decodeRequest<Req>(def.request, bytes), ctx);
        return res instanceof Uint8Array ? res : encode(def.response, res);
      },
    }];
  };

  return new Map<string, Method>([
    unary('Get', async (req: PointerRequest) => response(await state.get(ptr(req)))),

    [STATE_METHODS.List.path, {
      kind: 'server-stream',
      async handle(bytes, ctx, out) {
        const req = decodeRequest<{
          namespace: string; type: string; options?: { label_query: never[]; id_query?: { regexp: string } };
        }>('ListRequest', bytes);
        const list = await state.list({ namespace: req.namespace, type: req.type }, {
          labelQueries: labelQueriesFromWire(req.options?.label_query),
          ...(req.options?.id_query?.regexp ? { idQuery: req.options.id_query.regexp } : {}),
        });
        for (const r of list) {
          if (ctx.signal.aborted) return;
          const wait = out.write(response(r));
          if (wait) await wait;
        }
      },
    }],

    unary('Create', async (req: { resource?: WireResource; options?: { owner: string } }, ctx) => {
      const r = fromWire(req.resource, 'create');
      checkWrite(ctx, r.metadata.type);
      return response(await state.create(admit(r, 'create'), { owner: req.options?.owner ?? '' }));
    }),

    unary('Update', async (
      req: { new_resource?: WireResource; options?: { owner: string; expected_phase?: string } }, ctx,
    ) => {
      const r = fromWire(req.new_resource, 'update');
      // A controller holds its strong inputs with finalizers: an update that changes
      // nothing but the finalizers is allowed on any type; anything more needs the type as an output.
      try { checkWrite(ctx, r.metadata.type); } catch (e) {
        if (!finalizersOnly(await state.get(r.metadata), r)) throw e;
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
      await state.destroy(removal(ctx, req), { owner: req.options?.owner ?? '' }); return {};
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
        const req = decodeRequest<{
          namespace: string; type: string; id?: string; options?: WireWatchOptions; api_version: number;
        }>('WatchRequest', bytes);
        // The sink waits at this gate until the empty first response is out; the watch
        // awaits each sink call, so events keep their order without a side buffer.
        let openGate!: () => void;
        const gate = new Promise<void>((r) => { openGate = r; });
        const send = async (events: WatchEvent[]) => {
          await gate;
          if (ctx.signal.aborted) return;
          out.writeFramed(watchResponse(events));
          await out.flush();
        };
        const watch = await state.watch(
          { namespace: req.namespace, type: req.type, ...(has(req, 'id') ? { id: req.id! } : {}) },
          watchOptionsFromWire(req.options),
          send,
          req.api_version >= 1,
        );
        ctx.signal.addEventListener('abort', () => watch.close(), { once: true });
        // Rule 1: one empty response as soon as the watch is set up, before any event.
        out.write(encode('WatchResponse', {}));
        await out.flush();
        openGate();
        const err = await watch.done;
        if (err && !ctx.signal.aborted) throw err;
      },
    }],
  ]);
}

function decodeRequest<T>(name: MessageName, bytes: Uint8Array): T {
  try { return decode<T>(name, bytes); } catch (e) {
    throw new StateError('invalid-argument', `the request is not a ${name}: ${(e as Error).message}`, name,
      { cause: e });
  }
}
