// Hostile input, seeded (FUZZ_SEED, FUZZ_N): every parser of untrusted input in-process,
// then every RPC of the users' port over real mutual TLS against the built engine, with
// hostile connections beside it, while a bystander client keeps reading. Printed: inputs
// tried, crashes (a parser throwing what it does not promise, the server answering
// INTERNAL or dying), the slowest input, the bystander's Get p99, the engine's memory.
import t from 'tap';
import protobuf from 'protobufjs';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { connect as h2Connect } from 'node:http2';
import { readFileSync } from 'node:fs';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe } from './serve-harness.ts';
import { hostileYaml, mutate, rng } from '../../cosi/conformance/fuzz.ts';
import { resourceFromWire, resourceToWire } from '../../cosi/remote/codec.ts';
import { decode, encode, type MessageName } from '../../cosi/remote/wire.ts';
import { STATE_METHODS } from '../../cosi/remote/service.ts';
import { GrpcChannel, GrpcCallError } from '../../cosi/remote/grpc/client.ts';
import { FrameError, MessageReader, Status, frame } from '../../cosi/remote/grpc/framing.ts';
import { newResource, type Resource } from '../../cosi/resource/resource.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { decodeConfigInput } from '../../machinery/config/config-input.ts';
import { checkDocuments, loadDocuments } from '../../machinery/config/documents.ts';
import { translateUserDataWith } from '../../machinery/config/cloud-init/user-data.ts';
import { noJinja } from '../../machinery/config/cloud-init/jinja.ts';
import { CONFIG_RPC } from '../../machinery/model/service-wire.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../../plugins/index.ts';
import { fillDefinitions } from '../../cosi/meta/definition.ts';
import { startBystander } from '../../cosi/conformance/bystander.ts';
import { ADDRESS_SPEC_TYPE, MOTD_TYPE } from '../../proto/gen/resource-types.ts';

/** Every string at a field path (CreateResponse.resource.metadata.id is [1, 1, 3]) of raw protobuf, any occurrence. */
function idsAt(buf: Uint8Array, path: readonly number[]): string[] {
  const out: string[] = [];
  try {
    const r = protobuf.Reader.create(buf);
    while (r.pos < r.len) {
      const tag = r.uint32();
      if ((tag & 7) !== 2) {
        r.skipType(tag & 7);
        continue;
      }
      const b = r.bytes();
      if (tag >>> 3 !== path[0]) continue;
      if (path.length === 1) out.push(Buffer.from(b).toString('utf8'));
      else out.push(...idsAt(b, path.slice(1)));
    }
  } catch { /* the rest is not protobuf: what was read stands */ }
  return out;
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const N = Number(process.env.FUZZ_N ?? 10_000);
const codecs = builtinCodecs(builtinTypes());
const report = (line: string) => process.stdout.write(`# fuzz: ${line}\n`);

interface Tally {
  inputs: number; refused: number; crashes: number; slowestMs: number; firstCrash?: string;
  /** The slowest input run again, the best of three: a slow input is slow each time, a busy machine only once. */
  slowestAgainMs: number;
}
/** Runs `n` inputs through `fn`; `expected` says whether a throw is the parser's documented refusal. */
function fuzz(n: number, input: (i: number) => unknown, fn: (x: never) => unknown,
  expected: (e: unknown) => boolean): Tally {
  const tally: Tally = { inputs: 0, refused: 0, crashes: 0, slowestMs: 0, slowestAgainMs: 0 };
  let slowest: unknown;
  const timed = (x: unknown) => {
    const t0 = performance.now();
    try {
      fn(x as never);
    } catch (e) {
      return { ms: performance.now() - t0, error: e };
    }
    return { ms: performance.now() - t0 };
  };
  for (let i = 0; i < n; i++) {
    const x = input(i);
    const run = timed(x);
    if ('error' in run) {
      if (expected(run.error)) tally.refused++;
      else {
        tally.crashes++;
        tally.firstCrash ??= `${(run.error as Error)?.stack ?? String(run.error)}`.slice(0, 400);
      }
    }
    if (run.ms > tally.slowestMs) {
      tally.slowestMs = run.ms;
      slowest = x;
    }
    tally.inputs++;
  }
  tally.slowestAgainMs = Math.min(...[0, 1, 2].map(() => timed(slowest).ms));
  return tally;
}

t.test(`parsers: ${N} seeded inputs each, none throws what it does not promise`, async (t) => {
  const r = rng(SEED);
  const motd: Resource = newResource({ namespace: 'config', type: MOTD_TYPE, id: 'm' }, { text: 'hello' });
  const address: Resource = newResource({ namespace: 'network', type: ADDRESS_SPEC_TYPE, id: 'a' },
    { address: '192.0.2.1/24', link: 'eth0' });
  const wires = [resourceToWire(motd, codecs), resourceToWire(address, codecs)];
  const isState = (e: unknown) => e instanceof StateError;
  const config = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const sample = /What else you can declare[\s\S]*?```yaml\n([\s\S]*?)```/.exec(config)![1]!;
  const defs = fillDefinitions(builtinTypes());
  const ns = new Set(defs.map((d) => d.defaultNamespace));
  const results: Record<string, Tally> = {
    'a resource a client writes (yaml_spec)': fuzz(N, () => {
      const w = structuredClone(r.pick(wires));
      w.spec = { yaml_spec: hostileYaml(r) };
      return w;
    }, (w: Parameters<typeof resourceFromWire>[0]) => resourceFromWire(w, codecs, { admit: true }), isState),
    'a resource a client writes (proto_spec)': fuzz(N, () => {
      const w = structuredClone(r.pick(wires));
      w.spec = { proto_spec: mutate(r, w.spec!.proto_spec ?? Buffer.alloc(0)) };
      return w;
    }, (w: Parameters<typeof resourceFromWire>[0]) => resourceFromWire(w, codecs, { admit: true }), isState),
    'a machine config (bytes, gzip, YAML, documents)': fuzz(N, (i) => (i % 3 === 0
      ? Buffer.from(`${sample}---\n${hostileYaml(r)}`) : mutate(r, Buffer.from(sample))), (b: Buffer) => {
      const input = decodeConfigInput(b);
      if (input.ok) checkDocuments(loadDocuments(input.text), defs, ns);
    }, () => false),
    'cloud-init user data': fuzz(N, (i) => Buffer.from(i % 2 ? `#cloud-config\n${hostileYaml(r)}`
      : mutate(r, Buffer.from('#cloud-config\nhostname: a\nntp: {servers: [192.0.2.1]}\n'))),
    (b: Buffer) => translateUserDataWith(b, noJinja), () => false),
    'gRPC message framing': fuzz(N, () => [mutate(r, frame(Buffer.from('hello'))), r.bytes(r.int(32))],
      ([a, b]: [Buffer, Buffer]) => {
        const m = new MessageReader(4 << 20);
        m.push(a, () => {});
        m.push(b, () => {});
      }, (e) => e instanceof FrameError),
  };
  for (const [what, x] of Object.entries(results)) {
    report(`${what}: ${x.inputs} inputs, ${x.refused} refused, ${x.crashes} crashes, `
      + `slowest ${x.slowestMs.toFixed(1)} ms (${x.slowestAgainMs.toFixed(1)} ms again)`);
    t.equal(x.crashes, 0, `${what}: no crash${x.firstCrash ? ` (first: ${x.firstCrash})` : ''}`);
    t.ok(x.slowestAgainMs < 500, `${what}: the slowest input takes ${x.slowestAgainMs.toFixed(1)} ms run again `
      + `(${x.slowestMs.toFixed(1)} ms the first time)`);
  }
});

t.test(`the API: ${N} seeded inputs per RPC, hostile connections beside them, a bystander served`, async (t) => {
  const served = await startServe(artifacts().exe, ['--no-plugins']);
  t.teardown(() => served.stop());
  const pid = served.process.pid!;
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  const admin = served.client('admin');
  await admin.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'kept' }, { text: 'before' }));
  const motds = async (leaveOut: ReadonlySet<string> = new Set()) => JSON.stringify(
    (await admin.list({ namespace: 'config', type: MOTD_TYPE })).filter((x) => !leaveOut.has(x.metadata.id))
      .map((x) => x.metadata));
  const before = await motds();
  const rssBefore = rss();

  // The bystander: one Get every 20 ms on a connection of its own, in a thread of its own, timed.
  const bystander = await startBystander(`127.0.0.1:${served.port}`,
    { namespace: 'config', type: MOTD_TYPE, id: 'kept' }, { tls: served.tls('reader') });
  let maxRss = rssBefore;
  const sampler = setInterval(() => {
    try {
      maxRss = Math.max(maxRss, rss());
    } catch { /* gone: checked below */ }
  }, 200);

  // Every RPC, N inputs each: valid requests mutated, over one mutual-TLS connection, 32 in flight.
  const r = rng(SEED + 1);
  const fuzzChannel = new GrpcChannel(`127.0.0.1:${served.port}`, { tls: served.tls('admin') });
  const wire = resourceToWire(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'fuzz' }, { text: 'x' }),
    codecs);
  const ptr = { namespace: 'config', type: MOTD_TYPE, id: 'fuzz' };
  const valid: Record<string, Buffer> = {
    [STATE_METHODS.Get.path]: encode('GetRequest', ptr),
    [STATE_METHODS.List.path]: encode('ListRequest', { namespace: 'config', type: MOTD_TYPE, options: {} }),
    [STATE_METHODS.Watch.path]: encode('WatchRequest', { namespace: 'config', type: MOTD_TYPE, options: {} }),
    [STATE_METHODS.Create.path]: encode('CreateRequest', { resource: wire, options: {} }),
    [STATE_METHODS.Update.path]: encode('UpdateRequest', { new_resource: wire, options: {} }),
    [STATE_METHODS.Destroy.path]: encode('DestroyRequest', ptr),
    [STATE_METHODS.Teardown.path]: encode('TeardownRequest', ptr),
    [STATE_METHODS.TeardownAndDestroy.path]: encode('TeardownAndDestroyRequest', ptr),
    [CONFIG_RPC.applyConfig.path]: Buffer.from(CONFIG_RPC.applyConfig.request.encode({
      config: Buffer.from('metadata: {type: motd, id: fuzz}\nspec: {text: x}\n'), mode: 'merge', dryRun: true,
      trySeconds: 0, sourceName: 'fuzz',
    })),
    [CONFIG_RPC.confirmConfig.path]: Buffer.alloc(0),
  };
  const statuses: Record<string, Record<string, number>> = {};
  // What accepted writes may have changed (a mutation can stay a valid write): left out of the comparison.
  const touched = new Set<string>(['fuzz']);
  type Req = { id?: string; resource?: { metadata?: { id?: string } }; new_resource?: { metadata?: { id?: string } } };
  const SERVER_READS: Record<string, [MessageName, (r: Req) => unknown]> = {
    [STATE_METHODS.Create.path]: ['CreateRequest', (r) => r.resource?.metadata?.id],
    [STATE_METHODS.Update.path]: ['UpdateRequest', (r) => r.new_resource?.metadata?.id],
    [STATE_METHODS.Destroy.path]: ['DestroyRequest', (r) => r.id],
    [STATE_METHODS.Teardown.path]: ['TeardownRequest', (r) => r.id],
    [STATE_METHODS.TeardownAndDestroy.path]: ['TeardownAndDestroyRequest', (r) => r.id],
  };
  const noteAccepted = (path: string, input: Buffer, response: Buffer) => {
    try {
      if (path === CONFIG_RPC.applyConfig.path) {
        const applied = CONFIG_RPC.applyConfig.response.decode(response);
        for (const c of applied.changes ?? []) touched.add(c.resource.replace(/^.*\//, ''));
        return;
      }
      // Read as bare protobuf, not through this test's decoders: the server takes mutated inputs they refuse (a
      // phase's tag turned into the id's), and what it wrote is named there all the same. Every candidate counts.
      for (const id of [...idsAt(response, [1, 1, 3]), ...idsAt(input, [1, 1, 3]), ...idsAt(input, [3])]) {
        touched.add(id);
      }
    } catch { /* undecodable: it could not have named a resource */ }
    // And the id as the server's own decoder reads it: it lets a field run past the end of its message,
    // which idsAt's strict reading refuses (a mutated length of 102 made the id "uzz\"\tundefined...").
    const request = SERVER_READS[path];
    try {
      const id = request && request[1](decode(request[0], input));
      if (typeof id === 'string') touched.add(id);
    } catch { /* the server refused it too */ }
  };
  const streaming = new Set([STATE_METHODS.List.path, STATE_METHODS.Watch.path]);
  const UNKNOWN_OUTCOME = new Set<number>([Status.UNAVAILABLE, Status.DEADLINE_EXCEEDED, Status.CANCELLED, -1]);
  for (const [path, request] of Object.entries(valid)) {
    const counts: Record<string, number> = {};
    const one = async (i: number) => {
      const input = i % 5 === 0 ? r.bytes(r.int(128)) : mutate(r, request);
      let code: number;
      if (streaming.has(path)) {
        // A watch never ends by itself: once it answers (or after a moment) it has been parsed and judged.
        const call = fuzzChannel.serverStream(path, input, { deadlineMs: 5000 });
        let got = false;
        call.onMessage(() => {
          got = true;
        });
        const give = setTimeout(() => call.cancel(), 200);
        const e = await call.done;
        clearTimeout(give);
        code = e && !(got && e.code === Status.CANCELLED) ? e.code : Status.OK;
      } else {
        code = await fuzzChannel.unary(path, input, { deadlineMs: 5000 })
          .then((res) => {
            noteAccepted(path, input, res);
            return Status.OK;
          },
            (e: unknown) => (e instanceof GrpcCallError ? e.code : -1));
        // No answer (the connection went, the deadline passed): the server may have applied it all the same.
        if (UNKNOWN_OUTCOME.has(code)) noteAccepted(path, input, Buffer.alloc(0));
      }
      const name = code === -1 ? 'not gRPC'
        : Object.keys(Status).find((k) => Status[k as keyof typeof Status] === code)!;
      counts[name] = (counts[name] ?? 0) + 1;
    };
    for (let i = 0; i < N; i += 32) {
      await Promise.all(Array.from({ length: Math.min(32, N - i) }, (_, j) => one(i + j)));
    }
    statuses[path] = counts;
  }
  fuzzChannel.close();

  // Hostile connections: noise before TLS, noise after it, malformed gRPC frames, a huge request,
  // hundreds of idle connections, thousands of watches on one connection, a reader that never reads.
  const noise = async (n: number, tls: boolean) => {
    await Promise.all(Array.from({ length: n }, (_, i) => new Promise<void>((done) => {
      const s = tls ? tlsConnect({
        host: '127.0.0.1', port: served.port, rejectUnauthorized: false, ALPNProtocols: ['h2'],
        cert: served.secrets.clients.reader.certificate, key: served.secrets.clients.reader.key,
      }) : netConnect(served.port, '127.0.0.1');
      s.on('error', () => done());
      s.on('close', () => done());
      s.once(tls ? 'secureConnect' : 'connect', () => {
        s.write(rng(SEED + i).bytes(1 + (i % 512)));
        setTimeout(() => s.destroy(), 50);
      });
    })));
  };
  await noise(200, false);
  await noise(200, true);
  const malformed = await new Promise<number>((done) => {
    const s = h2Connect(`https://127.0.0.1:${served.port}`,
      { ...served.tls('admin'), rejectUnauthorized: false } as never);
    let answered = 0;
    const frames = [Buffer.from([1, 0, 0, 0, 1, 0]), Buffer.from([0, 0xff, 0xff, 0xff, 0xff]),
      Buffer.concat([frame(Buffer.alloc(3)), frame(Buffer.alloc(3))]), Buffer.from([0, 0, 0])];
    for (const f of frames) {
      const st = s.request({
        ':method': 'POST', ':path': STATE_METHODS.Get.path, 'content-type': 'application/grpc',
      });
      st.on('response', () => {
        if (++answered === frames.length) {
          s.close();
          done(answered);
        }
      });
      st.on('error', () => {});
      st.end(f);
    }
    s.on('error', () => done(answered));
  });
  const idle = await Promise.all(Array.from({ length: 300 }, () => new Promise<boolean>((done) => {
    const s = tlsConnect({ host: '127.0.0.1', port: served.port, ca: served.secrets.ca.certificate,
      ALPNProtocols: ['h2'], cert: served.secrets.clients.reader.certificate, key: served.secrets.clients.reader.key,
      servername: 'localhost' });
    s.on('error', () => done(false));
    s.once('secureConnect', () => done(true));
    setTimeout(() => s.destroy(), 3000);
  })));
  const watcher = served.client('reader');
  const watches = await Promise.allSettled(Array.from({ length: 2000 },
    () => watcher.watch({ namespace: 'config', type: MOTD_TYPE }, {}, () => {})));
  const opened = watches.filter((w) => w.status === 'fulfilled').length;
  for (const w of watches) if (w.status === 'fulfilled') w.value.close();
  watcher.close();
  // A reader that never reads while a thousand changes happen: its watch ends, the engine's memory stays.
  const slow = served.client('reader');
  const stuck = await slow.watch({ namespace: 'config', type: MOTD_TYPE }, { bootstrapContents: true },
    () => new Promise<void>(() => {}));
  for (let i = 0; i < 1200; i++) {
    await admin.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: `churn-${i}` },
      { text: 'x'.repeat(200) }));
  }
  for (let i = 0; i < 1200; i++) await admin.destroy({ namespace: 'config', type: MOTD_TYPE, id: `churn-${i}` });
  stuck.close();
  slow.close();

  const { latencies, errors: bystanderErrors } = await bystander.stop();
  clearInterval(sampler);
  const alive = (() => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  })();
  const after = await motds(touched);
  admin.close();
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? Infinity;
  const inputs = Object.values(statuses).reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0);
  const internal = Object.values(statuses).reduce((n, c) => n + (c.INTERNAL ?? 0), 0);
  for (const [path, c] of Object.entries(statuses)) report(`${path}: ${JSON.stringify(c)}`);
  report(`API: ${inputs} inputs, ${internal} crashes (INTERNAL), 400 noise connections, ${malformed}/4 malformed `
    + `frames answered, ${idle.filter(Boolean).length}/300 idle connections, ${opened}/2000 watches admitted on one `
    + `connection; bystander Get p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, p99 `
    + `${p99.toFixed(1)} ms over ${latencies.length} calls (${bystanderErrors.length} failed); engine RSS `
    + `${rssBefore.toFixed(0)} MiB before, at most ${maxRss.toFixed(0)} MiB during`);
  t.ok(alive, 'the engine is alive');
  t.equal(internal, 0, 'no call ended INTERNAL (an exception nobody meant)');
  t.ok(inputs >= N * Object.keys(valid).length, `${inputs} inputs`);
  t.equal(malformed, 4, 'every malformed gRPC frame was answered');
  t.equal(opened, 256, 'watches on one connection stop at the limit (256)');
  t.same(bystanderErrors, [], 'the bystander was never refused');
  t.ok(p99 <= 100, `the bystander's Get p99 is ${p99.toFixed(1)} ms (at most 100)`);
  t.ok(maxRss - rssBefore < 200, `the engine grew by ${(maxRss - rssBefore).toFixed(0)} MiB at most`);
  t.equal(after, before, 'nothing refused was applied: the motds are as they were');
});
