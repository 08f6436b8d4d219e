// The conformance suite over a real gRPC connection: our server on a loopback port,
// our client on the other end. Plus the wire rules a foreign client relies on.
import t from 'tap';
import {
  credentials, makeGenericClientConstructor, type Client, type MethodDefinition, type ServiceError, status,
} from '@grpc/grpc-js';
import { runStateSuite } from '../conformance/state-suite.ts';
import { MemoryState } from '../state/memory-state.ts';
import type { WatchEvent } from '../state/state.ts';
import { newResource } from '../resource/resource.ts';
import { RemoteState } from './client.ts';
import { grpcHttp2Server } from './grpc/http2-server.ts';
import { stateMethods, type StateServerOptions } from './server.ts';
import { STATE_METHODS } from './service.ts';
import { toStatus } from './status.ts';
import { decode, encode } from './wire.ts';
import { META_CODECS } from './meta-codecs.ts';
import { chainCodecs, protoCodec, staticCodecs, type SpecCodecs } from '../spec/spec-codec.ts';
import protobuf from 'protobufjs';
import { messageSet } from '../spec/message-info.ts';
import { load, WIRE_FILES } from '../../scripts/gen-proto.ts';

async function serve(
  state = new MemoryState(), codecs: SpecCodecs = META_CODECS, more: Partial<StateServerOptions> = {},
) {
  const grpc = grpcHttp2Server({
    methods: stateMethods(state, { codecs, ...more }), maxRequestBytes: 4 << 20, toStatus,
  });
  const port = await grpc.listen({ host: '127.0.0.1', port: 0 });
  return { server: { forceShutdown: () => void grpc.stop(0) }, port, state };
}

/** The wire's messages as protobufjs reads the .proto files: a codec independent of ours, for the raw side. */
const reference = load(WIRE_FILES, true);
const refType = (name: string) => reference.lookupType(`cosi.resource.${name}`);
/** protobufjs's message: own properties are the fields the bytes carried. */
const refDecode = <T = Record<string, unknown>>(name: string, b: Uint8Array) => refType(name).decode(b) as T;
const refEncode = (name: string, o: object) => Buffer.from(refType(name).encode(refType(name).fromObject(o)).finish());

/**
 * grpc-js's view of cosi.resource.State: an independent client (its own HTTP/2, gRPC and protobuf code) for the
 * raw wire checks.
 */
const stateServiceDefinition = Object.fromEntries(Object.entries(STATE_METHODS).map(([name, d]) => [name, {
  path: d.path, requestStream: false, responseStream: d.streaming, originalName: name,
  requestSerialize: (o: object) => (Buffer.isBuffer(o) ? o : refEncode(d.request, o)),
  requestDeserialize: (b: Buffer) => refDecode(d.request, b),
  responseSerialize: (o: object) => (Buffer.isBuffer(o) ? o : refEncode(d.response, o)),
  responseDeserialize: (b: Buffer) => refDecode(d.response, b),
}])) as unknown as Record<keyof typeof STATE_METHODS, MethodDefinition<object, unknown>>;

runStateSuite(t, async () => {
  const { server, port } = await serve();
  const client = new RemoteState(`127.0.0.1:${port}`);
  return { state: client, close: async () => {
    client.close();
    server.forceShutdown();
  } };
});

t.test('wire rules: empty first watch response, tombstones with a spec, versions as strings', async (t) => {
  const { server, port, state } = await serve();
  t.teardown(() => server.forceShutdown());
  // A raw client that decodes nothing for us: what any generated client sees.
  const Raw = makeGenericClientConstructor({
    Watch: { ...stateServiceDefinition.Watch, responseDeserialize: (b: Buffer) => b },
    Get: { ...stateServiceDefinition.Get, responseDeserialize: (b: Buffer) => b },
  }, 'State');
  const raw = new Raw(`127.0.0.1:${port}`, credentials.createInsecure()) as Client
    & Record<string, (...a: unknown[]) => any>;
  t.teardown(() => raw.close());
  const call = raw.Watch!({ namespace: 'n', type: 'T', id: 'missing' });
  const frames: Buffer[] = [];
  call.on('error', (e: ServiceError) => {
    if (e.code !== status.CANCELLED) t.fail(e.message); // we cancel it below
  });
  await new Promise<void>((res) => {
    call.on('data', (b: Buffer) => {
      frames.push(b);
      if (frames.length === 2) res();
    });
  });
  call.cancel();
  t.equal(frames[0]!.length, 0, 'first response is empty');
  const ev = refDecode<{
    event: { event_type: number; resource: { metadata: { version: string; id: string }; spec?: object } }[];
  }>('WatchResponse', frames[1]!);
  t.equal(ev.event[0]!.event_type, 2, 'DESTROYED for a missing resource');
  t.equal(ev.event[0]!.resource.metadata.version, 'undefined', 'tombstone version');
  t.ok(Object.hasOwn(ev.event[0]!.resource, 'spec'), 'tombstone carries a spec');

  await state.create(newResource({ namespace: 'n', type: 'T', id: 'x' }, { a: 1 }));
  const got = await new Promise<Buffer>((res, rej) => raw.Get!({ namespace: 'n', type: 'T', id: 'x' },
    (e: Error | null, b: Buffer) => (e ? rej(e) : res(b))));
  const r = refDecode<{
    resource: { metadata: { version: string; phase: string }; spec: { yaml_spec: string; proto_spec: Uint8Array } };
  }>('GetResponse', got);
  t.equal(r.resource.metadata.version, '1');
  t.equal(r.resource.metadata.phase, 'running');
  t.equal(r.resource.spec.yaml_spec, 'a: 1\n');
  t.notOk(got.includes(Buffer.from([0x0a, 0x00])) && r.resource.spec.proto_spec.length === 0
    && Object.hasOwn(r.resource.spec, 'proto_spec'), 'no empty proto_spec on the wire');
  t.notOk(Object.hasOwn(r.resource.spec, 'proto_spec'), 'proto_spec left unset');
});

t.test('status codes a foreign client sees', async (t) => {
  const { server, port } = await serve();
  t.teardown(() => server.forceShutdown());
  const Raw = makeGenericClientConstructor(stateServiceDefinition, 'State');
  const raw = new Raw(`127.0.0.1:${port}`, credentials.createInsecure()) as Client
    & Record<string, (...a: unknown[]) => any>;
  t.teardown(() => raw.close());
  const code = (method: string, req: object) => new Promise<number>((res) =>
    raw[method]!(req, (e: ServiceError | null) => res(e ? e.code : 0)));
  const wr = (id: string, version = 'undefined') => ({
    metadata: { namespace: 'n', type: 'T', id, version, phase: 'running' }, spec: { yaml_spec: 'a: 1' },
  });
  t.equal(await code('Get', { namespace: 'n', type: 'T', id: 'nope' }), status.NOT_FOUND);
  t.equal(await code('Create', { resource: wr('a'), options: { owner: 'o' } }), 0);
  t.equal(await code('Create', { resource: wr('a') }), status.ALREADY_EXISTS);
  t.equal(await code('Update', { new_resource: wr('a', '1'), options: { owner: 'x' } }), status.PERMISSION_DENIED);
  t.equal(await code('Update', { new_resource: wr('a', '7'), options: { owner: 'o' } }), status.FAILED_PRECONDITION);
  t.equal(await code('Update', {
    new_resource: wr('a', '1'), options: { owner: 'o', expected_phase: 'tearingDown' },
  }), status.INVALID_ARGUMENT);
  t.equal(await code('Create', {
    resource: { metadata: { namespace: 'n', type: 'T', id: 'bad' }, spec: { yaml_spec: 'a: [1' } },
  }), status.INVALID_ARGUMENT, 'bad YAML');
  const watchCode = (req: object) => new Promise<number>((res) => {
    const c = raw.Watch!(req);
    c.on('error', (e: ServiceError) => res(e.code));
    c.on('data', () => {
      c.cancel();
      res(0);
    });
  });
  t.equal(await watchCode({ namespace: 'n', type: 'T', id: 'a', options: { bootstrap_contents: true } }),
    status.UNIMPLEMENTED);
  t.equal(await watchCode({ namespace: 'n', type: 'T', options: { id_query: { regexp: '(' } } }),
    status.INVALID_ARGUMENT);
  t.equal(await watchCode({ namespace: 'n', type: 'T', options: { start_from_bookmark: Buffer.from('nope') } }),
    status.FAILED_PRECONDITION);
  t.equal(await watchCode({
    namespace: 'n', type: 'T', options: { label_query: [{ terms: [{ key: 'a', op: 42 }] }] },
  }), status.UNIMPLEMENTED, 'unknown label op');
  t.same(decode('GetRequest', encode('GetRequest', { namespace: 'a', type: 'b', id: 'c' })),
    { namespace: 'a', type: 'b', id: 'c' });
});

t.test('our codec and protobufjs agree on the wire messages: defaults, presence, timestamps, unknown fields',
  async (t) => {
    const wire = {
      metadata: {
        namespace: 'n', type: 'T', id: 'x', version: '3', owner: '', phase: 'running',
        created: 1_700_000_000_123, finalizers: ['a', 'b'], labels: { k: 'v' }, annotations: {},
      },
      spec: { yaml_spec: 'a: 1\n', proto_spec: Buffer.from([8, 1]) },
    };
    const theirs = refDecode<Record<string, Record<string, unknown>>>('Resource', encode('Resource', wire));
    const created = theirs.metadata!.created as { seconds: unknown; nanos: number };
    t.same({ seconds: Number(String(created.seconds)), nanos: created.nanos }, { seconds: 1_700_000_000,
      nanos: 123_000_000 }, 'a timestamp, to the ms');
    t.notOk(Object.hasOwn(theirs.metadata!, 'owner'), 'a default scalar is not on the wire');
    t.notOk(Object.hasOwn(theirs.metadata!, 'updated'), 'an absent message stays absent');
    const back = decode<typeof wire & { metadata: { updated?: string } }>('Resource', refEncode('Resource', {
      ...wire, metadata: { ...wire.metadata, created: { seconds: 1_700_000_000, nanos: 123_456_789 } },
    }));
    t.same(back, wire, 'what protobufjs writes reads back the same (nanoseconds cut to milliseconds)');
    t.equal(back.metadata.updated, undefined);
    const empty = decode<{ event: unknown[] }>('WatchResponse', Buffer.alloc(0));
    t.same(empty, { event: [] }, 'a repeated field reads as [] when absent');
    const watch = decode<Record<string, unknown>>('WatchRequest', refEncode('WatchRequest', { namespace: 'n' }));
    t.same(watch, { namespace: 'n', type: '', api_version: 0 }, 'scalars at their defaults; optional id and '
      + 'the options message absent');
    // A field number this side does not know (a newer client) is skipped.
    const newer = Buffer.concat([refEncode('GetRequest', { namespace: 'a' }), Buffer.from([0xf8, 0x07, 0x01])]);
    t.same(decode('GetRequest', newer), { namespace: 'a', type: '', id: '' });
    t.throws(() => decode('GetRequest', Buffer.from([0x0a, 0x05, 0x61])), /index out of range/, 'cut short');
  });

t.test('a WatchResponse around the resource bytes the server keeps reads like one encoded whole', async (t) => {
  const { encodeWatchResponse } = await import('./server.ts');
  const { eventToWire, resourceToWire } = await import('./codec.ts');
  const r = newResource({ namespace: 'n', type: 'T', id: 'x' }, { a: [1, 2] });
  const stored = { ...r, metadata: { ...r.metadata, version: 3, created: 1700000000123, updated: 1700000001456 } };
  const events = [
    {
      type: 'updated' as const, resource: stored, old: { ...stored, metadata: { ...stored.metadata, version: 2 } },
      bookmark: new Uint8Array([1, 2, 3]),
    },
    { type: 'errored' as const, resource: stored, error: 'buffer overrun' },
    { type: 'created' as const, resource: stored },
  ];
  const mine = encodeWatchResponse(events, (x) => encode('Resource', resourceToWire(x, META_CODECS)));
  const whole = encode('WatchResponse', {
    event: events.map((e) => eventToWire(e, (x) => resourceToWire(x, META_CODECS))),
  });
  t.ok(Buffer.compare(mine, whole) === 0, 'the same bytes');
  const theirs = refDecode<{ event: { event_type: number; error?: string; old?: object }[] }>('WatchResponse', mine);
  t.same(theirs.event.map((e) => e.event_type), [1, 4, 0], 'protobufjs reads the events');
  t.equal(theirs.event[1]!.error, 'buffer overrun');
});

// A type whose spec has a protobuf message of its own (what a plugin's types have).
const gadget = protobuf.Root.fromJSON({
  nested: {
    test: {
      nested: {
        GadgetSpec: {
          fields: {
            name: { type: 'string', id: 1, options: { '(appliance.v1alpha1.rules).required': true } },
            size: { type: 'uint32', id: 2, options: { proto3_optional: true } },
            tags: { rule: 'repeated', type: 'string', id: 3 },
            mode: { type: 'Mode', id: 4 },
          },
          oneofs: { _size: { oneof: ['size'] } },
        },
        Mode: { values: { MODE_UNSPECIFIED: 0, MODE_FAST: 1, MODE_SAFE: 2 } },
      },
    },
  },
}).lookupType('test.GadgetSpec');
// The same message as our codec's table; protobufjs (above) encodes and decodes the raw side independently.
const gadgetSet = messageSet([{
  name: 'test.GadgetSpec',
  fields: [
    { name: 'name', key: 'name', number: 1, kind: 'string', rules: { required: true } },
    { name: 'size', key: 'size', number: 2, kind: 'uint32', optional: true },
    { name: 'tags', key: 'tags', number: 3, kind: 'string', repeated: true },
    { name: 'mode', key: 'mode', number: 4, kind: 'enum', type: 'test.Mode' },
  ],
}], [{
  name: 'test.Mode',
  values: [{ name: 'MODE_UNSPECIFIED', number: 0 }, { name: 'MODE_FAST', number: 1 }, { name: 'MODE_SAFE', number: 2 }],
}]);
const GADGETS = 'Gadgets.test.cosi.dev';
const gadgetCodecs = chainCodecs(staticCodecs([[GADGETS, protoCodec(gadgetSet, 'test.GadgetSpec')]]), META_CODECS);

t.test('a spec with a message travels as proto_spec and yaml_spec; either is accepted, both must agree', async (t) => {
  const { server, port, state } = await serve(new MemoryState(), gadgetCodecs);
  t.teardown(() => server.forceShutdown());
  const Raw = makeGenericClientConstructor(stateServiceDefinition, 'State');
  const raw = new Raw(`127.0.0.1:${port}`, credentials.createInsecure()) as Client
    & Record<string, (...a: unknown[]) => any>;
  t.teardown(() => raw.close());
  const call = (method: string, req: object) => new Promise<any>((res, rej) =>
    raw[method]!(req, (e: ServiceError | null, r: unknown) => (e ? rej(e) : res(r))));
  const md = (id: string) => ({
    namespace: 'n', type: GADGETS, id, version: '', owner: '', phase: 'running',
    finalizers: [], labels: {}, annotations: {},
  });
  const proto = (o: object) => gadget.encode(gadget.fromObject(o)).finish();

  await call('Create', {
    resource: { metadata: md('by-proto'), spec: { proto_spec: proto({ name: 'a', size: 3, mode: 2 }) } },
  });
  await call('Create', { resource: { metadata: md('by-yaml'), spec: { yaml_spec: 'name: b\ntags: [x, y]\n' } } });
  await call('Create', {
    resource: {
      metadata: md('by-both'), spec: { yaml_spec: 'name: c\nmode: fast\n', proto_spec: proto({ name: 'c', mode: 1 }) },
    },
  });
  t.same((await state.get({ namespace: 'n', type: GADGETS, id: 'by-proto' })).spec,
    { name: 'a', size: 3, mode: 'safe' }, 'from proto_spec, to the object form');
  t.same((await state.get({ namespace: 'n', type: GADGETS, id: 'by-yaml' })).spec,
    { name: 'b', tags: ['x', 'y'] }, 'from yaml_spec');
  t.same((await state.get({ namespace: 'n', type: GADGETS, id: 'by-both' })).spec,
    { name: 'c', mode: 'fast' }, 'both, agreeing');

  const refused = async (spec: object, re: RegExp, what: string) => {
    try {
      await call('Create', { resource: { metadata: md('bad'), spec } });
      t.fail(`${what}: accepted`);
    } catch (e) {
      t.equal((e as ServiceError).code, status.INVALID_ARGUMENT, `${what}: INVALID_ARGUMENT`);
      t.match((e as ServiceError).details, re, what);
    }
  };
  await refused({ yaml_spec: 'name: c\nsize: 4\n', proto_spec: proto({ name: 'c', size: 5 }) },
    /proto_spec and yaml_spec disagree: spec.size: 5 vs 4/, 'disagreeing');
  await refused({ yaml_spec: 'name: c\nsize: -1\n' }, /spec.size: must be >= 0, got -1/, 'a rule of the message type');
  await refused({ yaml_spec: 'size: 1\n' }, /spec.name: required/, 'a required field');
  await refused({ yaml_spec: 'name: c\nmode: slow\n' }, /spec.mode: must be one of fast, safe, got "slow"/,
    'an enum value');
  await refused({ proto_spec: Buffer.from([0xff, 0xff, 0xff]) }, /proto_spec is not a GadgetSpec/, 'garbage bytes');
  await refused({ yaml_spec: 'name: [unclosed\n' }, /yaml_spec: not valid YAML/, 'broken YAML');

  // What every client then reads: both encodings, equal.
  const got = await call('Get', { namespace: 'n', type: GADGETS, id: 'by-yaml' });
  t.equal(got.resource.spec.yaml_spec, 'name: b\ntags:\n- x\n- "y"\n', 'YAML 1.1 would read a bare y as true');
  t.same(gadget.toObject(gadget.decode(got.resource.spec.proto_spec)), { name: 'b', tags: ['x', 'y'] },
    'proto_spec carries the same');
  const client = new RemoteState(`127.0.0.1:${port}`, { codecs: gadgetCodecs });
  t.teardown(() => client.close());
  t.same((await client.get({ namespace: 'n', type: GADGETS, id: 'by-proto' })).spec,
    { name: 'a', size: 3, mode: 'safe' }, 'our client reads the proto');
  const yamlOnly = new RemoteState(`127.0.0.1:${port}`);
  t.teardown(() => yamlOnly.close());
  t.same((await yamlOnly.get({ namespace: 'n', type: GADGETS, id: 'by-proto' })).spec,
    { name: 'a', size: 3, mode: 'safe' }, 'a client without the message reads the YAML');
});

t.test('watchers of one process share one decoded event, immutable like a state resource', async (t) => {
  const { server, port, state } = await serve();
  t.teardown(() => server.forceShutdown());
  const clients = [new RemoteState(`127.0.0.1:${port}`), new RemoteState(`127.0.0.1:${port}`)];
  t.teardown(() => {
    for (const c of clients) c.close();
  });
  const got: WatchEvent[][] = [[], [], []];
  const kind = { namespace: 'n', type: 'T' };
  // Two watches on one connection, one on another: the same bytes reach all three.
  const watches = await Promise.all([clients[0]!, clients[0]!, clients[1]!]
    .map((c, i) => c.watch(kind, {}, (evs) => { got[i]!.push(...evs); })));
  t.teardown(() => {
    for (const w of watches) w.close();
  });
  await state.create(newResource({ ...kind, id: 'a' }, { text: 'hello' }));
  for (let i = 0; i < 100 && got.some((g) => !g.length); i++) await new Promise((r) => setTimeout(r, 10));
  const [a, b, c] = got.map((g) => g[0]!);
  t.equal(a, b, 'decoded once for the two watches of one client');
  t.equal(a, c, 'and once for the other client of this process');
  t.same(a!.resource.spec, { text: 'hello' });
  t.ok(Object.isFrozen(a) && Object.isFrozen(a!.resource) && Object.isFrozen(a!.resource.metadata.labels), 'frozen');
  t.ok(Object.isFrozen(a!.resource.spec), 'its spec too, once read');
  t.throws(() => {
    (a!.resource as { spec: unknown }).spec = {};
  }, /immutable \(copy it to change it\)/);
  const copy = { ...a!.resource, spec: { text: 'changed' } };
  t.same(copy.spec, { text: 'changed' }, 'a copy is the caller\'s to change');
  t.same(a!.resource.spec, { text: 'hello' }, 'the shared one is untouched');
});

t.test('a renamed type answers to its former name: Get, List, Watch, Create and Destroy', async (t) => {
  const renamed = new Map([['OldThings.test.dev', 'NewThings.test.dev']]);
  const { server, port, state } = await serve(new MemoryState(), META_CODECS, {
    currentType: (type) => renamed.get(type) ?? type,
  });
  t.teardown(() => server.forceShutdown());
  const client = new RemoteState(`127.0.0.1:${port}`);
  t.teardown(() => client.close());
  const old = { namespace: 'n', type: 'OldThings.test.dev' };
  await state.create(newResource({ namespace: 'n', type: 'NewThings.test.dev', id: 'a' }, { text: 'kept' }));
  const got = await client.get({ ...old, id: 'a' });
  t.equal(got.metadata.type, 'NewThings.test.dev', 'Get: served as the type it now is');
  t.same(got.spec, { text: 'kept' });
  t.same((await client.list(old)).map((r) => r.metadata.id), ['a'], 'List');
  const seen: WatchEvent[] = [];
  const watch = await client.watch(old, { bootstrapContents: true }, (evs) => {
    seen.push(...evs);
  });
  t.teardown(() => watch.close());
  await client.create(newResource({ ...old, id: 'b' }, { text: 'new' }));
  t.equal((await state.get({ namespace: 'n', type: 'NewThings.test.dev', id: 'b' })).metadata.type,
    'NewThings.test.dev', 'Create: stored under the current type');
  for (let i = 0; i < 100 && !seen.some((e) => e.resource.metadata.id === 'b'); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  t.same(seen.filter((e) => e.type === 'created').map((e) => e.resource.metadata.id), ['a', 'b'], 'Watch');
  await client.destroy({ ...old, id: 'b' });
  t.same((await state.list({ namespace: 'n', type: 'NewThings.test.dev' })).map((r) => r.metadata.id), ['a'],
    'Destroy');
  t.rejects(client.get({ namespace: 'n', type: 'OtherThings.test.dev', id: 'a' }), /not found|doesn't exist/i,
    'any other name is itself');
});
