// Log sinks against the built engine (`appliance serve` with the test plugins): collectors are real
// TCP and UDP servers on loopback. Lines arrive as JSON; while the TCP collector is away the newest
// lines wait in the bounded buffer (the rest counted as dropped) and arrive once it is back.
import t from 'tap';
import { createSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { artifacts } from '../../../qemu/artifacts.ts';
import { startServe } from '../serve-harness.ts';
import { newResource } from '../../../cosi/resource/resource.ts';
import { type LogSinkStatusSpec } from '../../../machinery/model/runtime-types.ts';
import { parseSinkEndpoint } from './sink.ts';
import {
  CONFIG_NS, LOG_SINK_STATUS_TYPE, LOG_SINK_TYPE, RUNTIME_NS, TEST_FILE_READ_TYPE,
} from '../../../proto/gen/resource-types.ts';

const served = await startServe(artifacts().exe, ['--test-plugins']);
t.teardown(() => served.stop());
const admin = served.client();
t.teardown(() => admin.close());

interface Line { time: string; source: string; level: string; message: string; seq: number }
const askRead = (id: string, path = '/nonexistent') =>
  admin.create(newResource({ namespace: RUNTIME_NS, type: TEST_FILE_READ_TYPE, id }, { path }));
const sinkStatus = async (id: string) => (await admin.get({ namespace: RUNTIME_NS, type: LOG_SINK_STATUS_TYPE, id }))
  .spec as LogSinkStatusSpec;
async function until(what: string, f: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await f()) return;
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}

/** A TCP collector on `port` (0: any): every JSON line it receives. */
async function collector(port = 0): Promise<{ server: Server; port: number; lines: Line[]; close(): Promise<void> }> {
  const lines: Line[] = [];
  const conns = new Set<Socket>();
  const server = createServer((c) => {
    conns.add(c);
    let buf = '';
    c.on('data', (d) => {
      buf += d;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        lines.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
    });
    c.on('close', () => conns.delete(c));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    server, port: (server.address() as { port: number }).port, lines,
    close: () => new Promise((r) => {
      for (const c of conns) c.destroy();
      server.close(() => r());
    }),
  };
}

t.test('endpoints: tcp and udp, IPv6 in brackets; anything else is refused', async (t) => {
  t.same(parseSinkEndpoint('tcp://10.0.2.2:5170'), { protocol: 'tcp', host: '10.0.2.2', port: 5170 });
  t.same(parseSinkEndpoint('udp://[fd00::2]:514'), { protocol: 'udp', host: 'fd00::2', port: 514 });
  t.throws(() => parseSinkEndpoint('http://x:80'), /not tcp:\/\/HOST:PORT/);
  await t.rejects(admin.create(newResource({ namespace: CONFIG_NS, type: LOG_SINK_TYPE, id: 'bad' },
    { endpoint: 'http://collector:80', sources: [], bufferLines: 0 })), { code: 'invalid-argument',
    message: /tcp:\/\/HOST:PORT or udp:\/\/HOST:PORT/ });
  const reader = served.client('reader');
  t.teardown(() => reader.close());
  await t.rejects(reader.create(newResource({ namespace: CONFIG_NS, type: LOG_SINK_TYPE, id: 'r' },
    { endpoint: 'tcp://127.0.0.1:1', sources: [], bufferLines: 0 })), { code: 'permission-denied' });
});

t.test('TCP: lines as JSON; the collector away: the newest buffered, the rest counted; back: delivered',
  async (t) => {
    let c = await collector();
    const port = c.port;
    t.teardown(() => c.close());
    await admin.create(newResource({ namespace: CONFIG_NS, type: LOG_SINK_TYPE, id: 'tcp' },
      { endpoint: `tcp://127.0.0.1:${port}`, sources: ['test-reader'], bufferLines: 5 }));
    await until('sending', async () => (await sinkStatus('tcp')).state === 'sending');
    const id = `t${randomUUID().slice(0, 6)}`;
    await askRead(`${id}-first`);
    await until('the first line', () => c.lines.some((l) => l.message.includes(`${id}-first`)));
    t.match(c.lines.find((l) => l.message.includes(`${id}-first`)),
      { source: 'test-reader', level: 'warning', seq: Number, time: /^\d{4}-\d\d-\d\dT/ });
    t.ok(c.lines.every((l) => l.source === 'test-reader'), 'only the sources asked for');

    await c.close();
    await until('waiting', async () => (await sinkStatus('tcp')).state === 'waiting');
    t.match((await sinkStatus('tcp')).error, /ECONNREFUSED|closed the connection/);
    for (let i = 0; i < 10; i++) await askRead(`${id}-away-${i}`);
    await until('10 lines seen', async () => {
      const s = await sinkStatus('tcp');
      return s.buffered + s.dropped >= 10;
    });
    t.match(await sinkStatus('tcp'), { buffered: 5, dropped: 5 }, 'the buffer holds 5; 5 dropped');

    c = await collector(port);
    await until('the buffered lines, once back', () => c.lines.length >= 5, 40_000);
    t.same(c.lines.map((l) => l.message.replace(/^test-reader: (\S+): .*$/, '$1')),
      [5, 6, 7, 8, 9].map((i) => `${id}-away-${i}`), 'the newest five, in order');
    await until('sending again', async () => (await sinkStatus('tcp')).state === 'sending');
    await admin.destroy({ namespace: CONFIG_NS, type: LOG_SINK_TYPE, id: 'tcp' });
  });

t.test('UDP: a datagram per line', async (t) => {
  const u = createSocket('udp4');
  const got: Line[] = [];
  u.on('message', (m) => got.push(JSON.parse(m.toString())));
  await new Promise<void>((r) => u.bind(0, '127.0.0.1', r));
  t.teardown(() => u.close());
  await admin.create(newResource({ namespace: CONFIG_NS, type: LOG_SINK_TYPE, id: 'udp' },
    { endpoint: `udp://127.0.0.1:${u.address().port}`, sources: [], bufferLines: 0 }));
  await until('sending', async () => (await sinkStatus('udp')).state === 'sending');
  const id = `u${randomUUID().slice(0, 6)}`;
  await askRead(id);
  const reader = (l: Line) => l.source === 'test-reader' && l.message.includes(id);
  await until('the line', () => got.some(reader));
  t.match(got.find(reader), { level: 'warning', message: `test-reader: ${id}: cannot read /nonexistent: ENOENT` });
  t.ok(got.some((l) => l.source === 'audit'), 'no sources named: the other sources\' lines too (the audit log\'s)');
  await admin.destroy({ namespace: CONFIG_NS, type: LOG_SINK_TYPE, id: 'udp' });
  await until('its status goes with it', async () => {
    try {
      await sinkStatus('udp');
      return false;
    } catch (e) {
      if ((e as { code?: string }).code === 'not-found') return true;
      throw e;
    }
  });
});

t.test('a LogSink in the config the engine starts with sends from the start (the sinks follow the state, not '
  + 'only its changes)', async (t) => {
  const c = await collector();
  t.teardown(() => c.close());
  const booted = await startServe(artifacts().exe, ['--no-plugins'], {
    config: `metadata: {type: ${LOG_SINK_TYPE}, namespace: ${CONFIG_NS}, id: from-boot}\n`
      + `spec: {endpoint: "tcp://127.0.0.1:${c.port}"}\n`,
  });
  t.teardown(() => booted.stop());
  await until('the engine\'s lines at the collector', () => c.lines.length > 0);
  t.ok(c.lines.some((l) => l.source === 'engine'), 'the engine\'s own lines');
  const admin2 = booted.client();
  t.teardown(() => admin2.close());
  const st = (await admin2.get({ namespace: RUNTIME_NS, type: LOG_SINK_STATUS_TYPE, id: 'from-boot' }))
    .spec as LogSinkStatusSpec;
  t.match(st, { endpoint: `tcp://127.0.0.1:${c.port}` }, 'and its status');
});
