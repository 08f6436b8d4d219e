// client: a State backed by a cosi.resource.State gRPC server. Plugins, cosictl and
// the conformance tests use it; its errors are the same StateErrors the memory
// state throws (see status.ts).
import type { Pointer, Resource } from '../resource/resource.ts';
import type { ResourceFilter } from '../state/query.ts';
import type { State, UpdateOptions, Watch, WatchEvent, WatchOptions, WatchSink } from '../state/state.ts';
import {
  eventFromWire, labelQueriesToWire, resourceFromWire, resourceToWire, watchOptionsToWire, type WireEvent,
  type WireResource,
} from './codec.ts';
import { GrpcCallError, GrpcChannel, type ChannelOptions } from './grpc/client.ts';
import { Status } from './grpc/framing.ts';
import { decode, encode } from './wire.ts';
import { STATE_METHODS, type StateMethod } from './service.ts';
import { fromCallError } from './status.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';
import { META_CODECS } from './meta-codecs.ts';
import { sharedDecodes } from './shared-decodes.ts';

export interface RemoteStateOptions extends ChannelOptions {
  /** Deadline of every call but Watch (unary calls and List), ms (default: none). */
  timeoutMs?: number;
  /** How specs travel per type (default: the meta types; every other spec as YAML). */
  codecs?: SpecCodecs;
}

export class RemoteState implements State {
  private readonly channel: GrpcChannel;
  readonly codecs: SpecCodecs;

  /** address: "host:port" or "unix:///path/to.sock". */
  constructor(readonly address: string, private readonly o: RemoteStateOptions = {}) {
    this.codecs = o.codecs ?? META_CODECS;
    this.channel = new GrpcChannel(address, o);
  }

  close(): void { this.channel.close(); }

  /** Waits until the connection is up (or throws after `ms`, saying why: refused, timed out, ...). */
  async waitReady(ms = 5000): Promise<void> {
    try {
      await this.channel.waitReady(ms);
    } catch (e) {
      // Reached, and a certificate refused (either side's): said as such, not as "cannot reach".
      if (e instanceof GrpcCallError && e.code === Status.UNAUTHENTICATED) throw fromCallError(e);
      throw new Error(`cannot reach the COSI API: ${(e as Error).message}`, { cause: e });
    }
  }

  private async call<T = Record<string, unknown>>(
    method: StateMethod, req: object, deadlineMs = this.o.timeoutMs,
  ): Promise<T> {
    const def = STATE_METHODS[method];
    try {
      const bytes = await this.channel.unary(def.path, encode(def.request, req), deadlineMs ? { deadlineMs } : {});
      return decode<T>(def.response, bytes);
    } catch (e) { throw fromCallError(e); }
  }

  /** A unary call of another service served on the same connection (the machine config service). */
  async unary(path: string, request: Uint8Array, deadlineMs = this.o.timeoutMs): Promise<Buffer> {
    try {
      return await this.channel.unary(path, request, deadlineMs ? { deadlineMs } : {});
    } catch (e) { throw fromCallError(e); }
  }

  /**
   * A server-streaming call of another service on the same connection (the log service): each message
   * to `onMessage` in order (a promise it returns holds the next); `done` settles when the stream ends,
   * with the error unless it ended by `cancel()`.
   */
  stream(path: string, request: Uint8Array, onMessage: (m: Buffer) => void | Promise<void>, deadlineMs?: number):
    { done: Promise<Error | undefined>; cancel(): void } {
    const call = this.channel.serverStream(path, request, deadlineMs ? { deadlineMs } : {});
    let cancelled = false;
    call.onMessage(onMessage);
    return {
      done: call.done.then((e) => (cancelled && e?.code === Status.CANCELLED ? undefined
        : e ? fromCallError(e) : undefined)),
      cancel: () => {
        cancelled = true;
        call.cancel();
      },
    };
  }

  async get(p: Pointer): Promise<Resource> {
    const res = await this.call<{ resource: WireResource }>('Get', { namespace: p.namespace, type: p.type, id: p.id });
    return resourceFromWire(res.resource, this.codecs, { where: 'get', lazy: true });
  }

  async list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]> {
    const stream = this.channel.serverStream(STATE_METHODS.List.path, encode('ListRequest', {
      namespace: kind.namespace, type: kind.type,
      options: {
        label_query: labelQueriesToWire(filter?.labelQueries),
        ...(filter?.idQuery ? { id_query: { regexp: filter.idQuery } } : {}),
      },
    }), this.o.timeoutMs ? { deadlineMs: this.o.timeoutMs } : {});
    const out: Resource[] = [];
    stream.onMessage((m) => {
      out.push(resourceFromWire(decode<{ resource: WireResource }>('ListResponse', m).resource, this.codecs,
        { where: 'list', lazy: true }));
    });
    const err = await stream.done;
    if (err) throw fromCallError(err);
    return out;
  }

  async create(r: Resource, opts: { owner?: string } = {}): Promise<Resource> {
    const res = await this.call<{ resource: WireResource }>('Create', {
      resource: resourceToWire(r, this.codecs), options: { owner: opts.owner ?? '' },
    });
    return resourceFromWire(res.resource, this.codecs, { where: 'create' });
  }

  async update(r: Resource, opts: UpdateOptions = {}): Promise<Resource> {
    const res = await this.call<{ resource: WireResource }>('Update', {
      new_resource: resourceToWire(r, this.codecs),
      options: { owner: opts.owner ?? '', ...(opts.expectedPhase ? { expected_phase: opts.expectedPhase } : {}) },
    });
    return resourceFromWire(res.resource, this.codecs, { where: 'update' });
  }

  async destroy(p: Pointer, opts: { owner?: string } = {}): Promise<void> {
    await this.call('Destroy', { ...p, options: { owner: opts.owner ?? '' } });
  }

  async teardown(p: Pointer, opts: { owner?: string } = {}): Promise<boolean> {
    const res = await this.call<{ destroy_ready: boolean }>('Teardown', { ...p, options: { owner: opts.owner ?? '' } });
    return res.destroy_ready === true;
  }

  /** `deadlineMs`: this call's own, for a caller that knows controllers may take a while to let go. */
  async teardownAndDestroy(p: Pointer, opts: { owner?: string; deadlineMs?: number } = {}): Promise<void> {
    await this.call('TeardownAndDestroy', { ...p, options: { owner: opts.owner ?? '' } },
      opts.deadlineMs ?? this.o.timeoutMs);
  }

  /** Resolves once the server's first (empty) response arrives; rejects if the watch is refused. */
  watch(
    req: { namespace: string; type: string; id?: string }, opts: WatchOptions, sink: WatchSink, showAll = false,
  ): Promise<Watch> {
    const stream = this.channel.serverStream(STATE_METHODS.Watch.path, encode('WatchRequest', {
      namespace: req.namespace, type: req.type, ...(req.id !== undefined ? { id: req.id } : {}),
      options: watchOptionsToWire(opts), api_version: showAll ? 1 : 0,
    }));
    return new Promise((resolve, reject) => {
      let started = false;
      let closed = false;
      let sinkError: Error | undefined;
      const watch: Watch = {
        close: () => {
          closed = true;
          stream.cancel();
        },
        done: stream.done.then((e) => sinkError
          ?? (closed && e?.code === Status.CANCELLED ? undefined : e ? fromCallError(e) : undefined)),
      };
      // Each batch waits for the previous sink call: order kept, the stream paused meanwhile.
      const failed = (e: unknown) => {
        sinkError = e as Error;
        closed = true;
        stream.cancel();
      };
      const events = (m: Uint8Array) => (decode<{ event?: WireEvent[] }>('WatchResponse', m).event ?? [])
        .map((e) => eventFromWire(e, this.codecs, true, true));
      stream.onMessage((m) => {
        if (!started) {
          started = true;
          resolve(watch);
          if (!decode<{ event?: WireEvent[] }>('WatchResponse', m).event?.length) return undefined;
        }
        if (closed) return undefined;
        try {
          const p = sink(sharedDecodes.get(m, this.codecs, events));
          return p ? p.catch(failed) : undefined;
        } catch (e) {
          failed(e);
          return undefined;
        }
      });
      void stream.done.then((e) => {
        if (!started) reject(e ? fromCallError(e) : new Error('the watch ended before it started'));
      });
    });
  }
}
