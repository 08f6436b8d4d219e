// client: a State backed by a cosi.resource.State gRPC server. Plugins, cosictl and
// the conformance tests use it; its errors are the same StateErrors the memory
// state throws (see status.ts).
import { credentials, makeGenericClientConstructor, status, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import type { Pointer, Resource } from '../resource/resource.ts';
import type { ResourceFilter } from '../state/query.ts';
import type { State, UpdateOptions, Watch, WatchOptions, WatchSink } from '../state/state.ts';
import { eventFromWire, labelQueriesToWire, resourceFromWire, resourceToWire, watchOptionsToWire, type WireEvent, type WireResource } from './codec.ts';
import { stateServiceDefinition } from './service.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';
import { META_CODECS } from './meta-codecs.ts';
import { fromServiceError } from './status.ts';

type Unary = (req: object, cb: (err: ServiceError | null, res: Record<string, unknown>) => void) => void;
type Streaming = (req: object) => ClientReadableStream<Record<string, unknown>>;

const StateClient = makeGenericClientConstructor(stateServiceDefinition, 'State');

export interface RemoteStateOptions {
  /** Per-call deadline for unary calls, ms (default: none). */
  timeoutMs?: number;
  /** How specs travel per type (default: the meta types; every other spec as YAML). */
  codecs?: SpecCodecs;
}


export class RemoteState implements State {
  private readonly client: Client & Record<string, Unary | Streaming>;
  readonly codecs: SpecCodecs;

  /** address: "host:port" or "unix:///path/to.sock". */
  constructor(readonly address: string, private readonly o: RemoteStateOptions = {}) {
    this.codecs = o.codecs ?? META_CODECS;
    this.client = new StateClient(address, credentials.createInsecure(), {
      'grpc.max_receive_message_length': 64 << 20,
    }) as unknown as Client & Record<string, Unary | Streaming>;
  }

  close(): void { this.client.close(); }

  /** Waits until the channel is connected (or throws after `ms`). */
  waitReady(ms = 5000): Promise<void> {
    return new Promise((resolve, reject) => this.client.waitForReady(Date.now() + ms, (e) => (e ? reject(new Error(`cannot reach the COSI API at ${this.address} within ${ms}ms: ${e.message}`)) : resolve())));
  }

  private call(method: string, req: object): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const fn = this.client[method] as Unary;
      const args: unknown[] = [req];
      if (this.o.timeoutMs) args.push({ deadline: Date.now() + this.o.timeoutMs });
      (fn as (...a: unknown[]) => void).apply(this.client, [...args, (err: ServiceError | null, res: Record<string, unknown>) => (err ? reject(fromServiceError(err)) : resolve(res))]);
    });
  }

  async get(p: Pointer): Promise<Resource> {
    const res = await this.call('Get', { namespace: p.namespace, type: p.type, id: p.id });
    return resourceFromWire(res.resource as WireResource, this.codecs, { where: 'get', lazy: true });
  }

  list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]> {
    return new Promise((resolve, reject) => {
      const stream = (this.client.List as Streaming).call(this.client, {
        namespace: kind.namespace, type: kind.type,
        options: { label_query: labelQueriesToWire(filter?.labelQueries), ...(filter?.idQuery ? { id_query: { regexp: filter.idQuery } } : {}) },
      });
      const out: Resource[] = [];
      stream.on('data', (m) => out.push(resourceFromWire(m.resource as WireResource, this.codecs, { where: 'list', lazy: true })));
      stream.on('error', (e) => reject(fromServiceError(e)));
      stream.on('end', () => resolve(out));
    });
  }

  async create(r: Resource, opts: { owner?: string } = {}): Promise<Resource> {
    const res = await this.call('Create', { resource: resourceToWire(r, this.codecs), options: { owner: opts.owner ?? '' } });
    return resourceFromWire(res.resource as WireResource, this.codecs, { where: 'create' });
  }

  async update(r: Resource, opts: UpdateOptions = {}): Promise<Resource> {
    const res = await this.call('Update', {
      new_resource: resourceToWire(r, this.codecs),
      options: { owner: opts.owner ?? '', ...(opts.expectedPhase ? { expected_phase: opts.expectedPhase } : {}) },
    });
    return resourceFromWire(res.resource as WireResource, this.codecs, { where: 'update' });
  }

  async destroy(p: Pointer, opts: { owner?: string } = {}): Promise<void> {
    await this.call('Destroy', { ...p, options: { owner: opts.owner ?? '' } });
  }

  async teardown(p: Pointer, opts: { owner?: string } = {}): Promise<boolean> {
    const res = await this.call('Teardown', { ...p, options: { owner: opts.owner ?? '' } });
    return res.destroy_ready === true;
  }

  async teardownAndDestroy(p: Pointer, opts: { owner?: string } = {}): Promise<void> {
    await this.call('TeardownAndDestroy', { ...p, options: { owner: opts.owner ?? '' } });
  }

  /** Resolves once the server's first (empty) response arrives; rejects if the watch is refused. */
  watch(req: { namespace: string; type: string; id?: string }, opts: WatchOptions, sink: WatchSink, showAll = false): Promise<Watch> {
    const call = (this.client.Watch as Streaming).call(this.client, {
      namespace: req.namespace, type: req.type, ...(req.id !== undefined ? { id: req.id } : {}),
      options: watchOptionsToWire(opts), api_version: showAll ? 1 : 0,
    });
    return new Promise((resolve, reject) => {
      let started = false;
      let closed = false;
      let finish!: (e: Error | undefined) => void;
      const done = new Promise<Error | undefined>((r) => { finish = r; });
      // Each batch waits for the previous sink call: order kept, the stream paused meanwhile.
      let chain: Promise<void> = Promise.resolve();
      const watch: Watch = { close: () => { closed = true; call.cancel(); }, done };
      call.on('data', (msg: { event?: WireEvent[] }) => {
        if (!started) { started = true; resolve(watch); if (!msg.event?.length) return; }
        const events = (msg.event ?? []).map((e) => eventFromWire(e, this.codecs, true));
        call.pause();
        chain = chain.then(async () => { if (!closed) await sink(events); call.resume(); }).catch((e: Error) => { closed = true; call.cancel(); finish(e); });
      });
      call.on('error', (e: ServiceError) => {
        const err = closed && e.code === status.CANCELLED ? undefined : fromServiceError(e);
        if (!started) { reject(err ?? fromServiceError(e)); finish(err); return; }
        void chain.then(() => finish(err));
      });
      call.on('end', () => { void chain.then(() => finish(undefined)); });
    });
  }
}
