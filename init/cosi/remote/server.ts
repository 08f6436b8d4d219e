// server: serves any State as cosi.resource.State over grpc-js. A writer guard can
// restrict which types a connection may write (plugins: their declared outputs), and
// a validator checks specs against their definitions before anything is stored.
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Pointer, Resource } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import type { State, WatchEvent } from '../state/state.ts';
import protobuf from 'protobufjs';
import { labelQueriesFromWire, resourceFromWire, resourceToWire, watchOptionsFromWire, type WireResource, type WireWatchOptions } from './codec.ts';
import { encode, has } from './proto.ts';
import { toServiceError } from './status.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';
import { sameSpec } from '../spec/spec-equal.ts';

export interface WriteGuard {
  /** Throws permission-denied (naming the writer) if this connection may not write `type`. */
  check(type: string): void;
}

export interface StateServerOptions {
  /** How specs travel and are checked, per type (a type it does not know is free-form YAML). */
  codecs: SpecCodecs;
  guard?: WriteGuard;
  /** A resource a client creates or updates, as it is to be stored; throws to refuse it (unknown type, namespace). */
  admit?: (r: Resource, op: 'create' | 'update') => Resource;
  /** Throws to refuse a Destroy or Teardown (a built-in definition). */
  admitRemoval?: (p: Pointer) => void;
}

/** Field 1 (resource) of Get/List/Create/UpdateResponse, wrapped around an encoded Resource. */
function wrapField1(inner: Buffer): Buffer {
  return Buffer.from(protobuf.Writer.create().uint32(0x0a).bytes(inner).finish());
}

const EVENT_NUMBER: Record<WatchEvent['type'], number> = { created: 0, updated: 1, destroyed: 2, bootstrapped: 3, errored: 4, noop: 5 };

/**
 * A WatchResponse framed by hand around already-encoded resources: every watcher of
 * a change shares one encoding of the resource instead of encoding it again.
 *   WatchResponse { repeated Event event = 1 }
 *   Event { Resource resource = 1; EventType event_type = 2; Resource old = 3; optional string error = 4; optional bytes bookmark = 5 }
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

/** Ends a server stream with the error's status (grpc-js takes it from an 'error' event). */
function failStream(call: ServerWritableStream<unknown, unknown>, e: unknown): void {
  if (!call.cancelled) call.emit('error', toServiceError(e));
}

/** True when `next` differs from `cur` in its finalizers alone. */
function finalizersOnly(cur: Resource, next: Resource): boolean {
  const m = cur.metadata; const n = next.metadata;
  return m.owner === n.owner && m.phase === n.phase && sameSpec(m.labels, n.labels) && sameSpec(m.annotations, n.annotations)
    && sameSpec(cur.spec, next.spec);
}

interface PointerRequest { namespace: string; type: string; id: string; options?: { owner?: string } }
const ptr = (r: PointerRequest): Pointer => ({ namespace: r.namespace, type: r.type, id: r.id });

export function createStateService(state: State, o: StateServerOptions): UntypedServiceImplementation {
  // Stored resources are immutable, so their encoding can be kept with them.
  const encoded = new WeakMap<Resource, Buffer>();
  const resourceBytes = (r: Resource): Buffer => {
    let b = encoded.get(r);
    if (!b) { b = encode('Resource', resourceToWire(r, o.codecs)); encoded.set(r, b); }
    return b;
  };
  const response = (r: Resource) => wrapField1(resourceBytes(r));

  const checkWrite = (r: Resource | Pointer) => {
    const p = 'metadata' in r ? r.metadata : r;
    o.guard?.check(p.type);
  };
  const admit = (r: Resource, op: 'create' | 'update') => (o.admit ? o.admit(r, op) : r);
  const removal = (req: PointerRequest) => { const p = ptr(req); o.guard?.check(p.type); o.admitRemoval?.(p); return p; };
  const fromWire = (w: WireResource | undefined, where: string) => resourceFromWire(w ?? {}, o.codecs, { where, admit: true });

  const unary = <Req, Res>(fn: (req: Req) => Promise<Res>) => (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>) => {
    fn(call.request).then((res) => cb(null, res), (e) => cb(toServiceError(e)));
  };

  return {
    Get: unary(async (req: PointerRequest) => response(await state.get(ptr(req)))),

    List: (call: ServerWritableStream<{ namespace: string; type: string; options?: { label_query: never[]; id_query?: { regexp: string } } }, Buffer>) => {
      (async () => {
        const opts = call.request.options;
        const list = await state.list({ namespace: call.request.namespace, type: call.request.type }, {
          labelQueries: labelQueriesFromWire(opts?.label_query),
          ...(opts?.id_query?.regexp ? { idQuery: opts.id_query.regexp } : {}),
        });
        for (const r of list) {
          if (call.cancelled) return;
          if (!call.write(response(r))) await new Promise((res) => call.once('drain', res));
        }
        call.end();
      })().catch((e) => failStream(call, e));
    },

    Create: unary(async (req: { resource?: WireResource; options?: { owner: string } }) => {
      const r = fromWire(req.resource, 'create');
      checkWrite(r);
      return response(await state.create(admit(r, 'create'), { owner: req.options?.owner ?? '' }));
    }),

    Update: unary(async (req: { new_resource?: WireResource; options?: { owner: string; expected_phase?: string } }) => {
      const r = fromWire(req.new_resource, 'update');
      // A controller holds its strong inputs with finalizers: an update that changes
      // nothing but the finalizers is allowed on any type; anything more needs the type as an output.
      try { checkWrite(r); } catch (e) {
        if (!finalizersOnly(await state.get(r.metadata), r)) throw e;
      }
      const admitted = admit(r, 'update');
      const o2 = req.options;
      let expectedPhase: 'running' | 'tearingDown' | undefined;
      if (o2 && has(o2, 'expected_phase')) {
        if (o2.expected_phase !== 'running' && o2.expected_phase !== 'tearingDown') throw new StateError('invalid-argument', `unknown expected phase "${o2.expected_phase}"`, o2.expected_phase);
        expectedPhase = o2.expected_phase;
      }
      return response(await state.update(admitted, { owner: o2?.owner ?? '', ...(expectedPhase ? { expectedPhase } : {}) }));
    }),

    Destroy: unary(async (req: PointerRequest) => { await state.destroy(removal(req), { owner: req.options?.owner ?? '' }); return {}; }),
    Teardown: unary(async (req: PointerRequest) => ({ destroy_ready: await state.teardown(removal(req), { owner: req.options?.owner ?? '' }) })),
    TeardownAndDestroy: unary(async (req: PointerRequest) => {
      await state.teardownAndDestroy(removal(req), { owner: req.options?.owner ?? '' });
      return {};
    }),

    Watch: (call: ServerWritableStream<{ namespace: string; type: string; id?: string; options?: WireWatchOptions; api_version: number }, object>) => {
      const req = call.request;
      // The sink waits at this gate until the empty first response is out; the watch
      // awaits each sink call, so events keep their order without a side buffer.
      let openGate!: () => void;
      const gate = new Promise<void>((r) => { openGate = r; });
      const send = async (events: WatchEvent[]) => {
        await gate;
        if (call.cancelled) return;
        const bytes = encodeWatchResponse(events, resourceBytes);
        if (!call.write(bytes)) await new Promise((res) => call.once('drain', res));
      };
      const fail = (e: unknown) => failStream(call, e);
      (async () => {
        const watch = await state.watch(
          { namespace: req.namespace, type: req.type, ...(has(req, 'id') ? { id: req.id! } : {}) },
          watchOptionsFromWire(req.options),
          send,
          req.api_version >= 1,
        );
        call.on('cancelled', () => watch.close());
        // Rule 1: one empty response as soon as the watch is set up, before any event.
        call.write(encode('WatchResponse', {}));
        openGate();
        const err = await watch.done;
        if (call.cancelled) return;
        if (err) fail(err); else call.end();
      })().catch(fail);
    },
  };
}
