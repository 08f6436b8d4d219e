// Our HTTP/2 client against node's server on a real socket: a paused reader holds the server back (flow control),
// more calls than the server's stream limit wait their turn, trailers too big for a frame, a server that says
// GOAWAY, servers that break the protocol, and the reason it exists: a plugin's process never loads node's http2.
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as connectTcp, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GrpcChannel } from './client.ts';
import { Status } from './framing.ts';
import { grpcHttp2Server, type GrpcHttp2Server } from './http2-server.ts';
import type { Method } from './server.ts';
import { encodeFrame, FrameType } from './h2-frames.ts';
import { H2Session } from './h2-session.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serve(t: Test, methods: Record<string, Method>): Promise<{ srv: GrpcHttp2Server; ch: GrpcChannel }> {
  const srv = grpcHttp2Server({
    methods: new Map(Object.entries(methods)), maxRequestBytes: 8 << 20,
    toStatus: (e) => ({ code: Status.INTERNAL, message: (e as Error).message }),
  });
  const port = await srv.listen({ host: '127.0.0.1', port: 0 });
  const ch = new GrpcChannel(`127.0.0.1:${port}`, { http2: 'own' });
  const alive = setInterval(() => undefined, 1000); // the server and the channel hold no event loop by themselves
  t.teardown(() => {
    clearInterval(alive);
    ch.close();
    void srv.stop(0);
  });
  return { srv, ch };
}

t.test('a paused reader holds the server back; resumed, it gets every byte in order', async (t) => {
  const MESSAGES = 128;
  const SIZE = 64 * 1024;
  let written = 0;
  const { ch } = await serve(t, {
    '/t.S/Flood': {
      kind: 'server-stream', handle: async (_req, _ctx, out) => {
        for (let i = 0; i < MESSAGES; i++) {
          await out.writeFramedNow(Buffer.concat([Buffer.from([0, 0, 1, 0, 0]), Buffer.alloc(SIZE, i)]));
          written++;
        }
      },
    },
  });
  const got = createHash('sha256');
  const want = createHash('sha256');
  for (let i = 0; i < MESSAGES; i++) want.update(Buffer.alloc(SIZE, i));
  let received = 0;
  let writtenAtPause = -1;
  const stream = ch.serverStream('/t.S/Flood', Buffer.alloc(0));
  stream.onMessage(async (m) => {
    got.update(m);
    if (++received !== 4) return;
    // Held here: the server may fill the stream's window (1 MiB) and its own buffers, not all 8 MiB.
    await pause(500);
    writtenAtPause = written;
  });
  t.equal(await stream.done, undefined, 'the call ended OK');
  t.equal(received, MESSAGES);
  t.equal(got.digest('hex'), want.digest('hex'), 'every byte, in order');
  t.ok(writtenAtPause > 0 && writtenAtPause < MESSAGES / 2,
    `the server was held back: ${writtenAtPause} of ${MESSAGES} messages written while the reader paused`);
});

t.test('more calls than the server\'s stream limit wait for their turn, and a large upload flows', async (t) => {
  let open = 0;
  let most = 0;
  const { srv, ch } = await serve(t, {
    '/t.S/Slow': {
      kind: 'unary', handle: async (req) => {
        most = Math.max(most, ++open);
        await pause(50);
        open--;
        return req;
      },
    },
  });
  srv.server.updateSettings({ maxConcurrentStreams: 2 });
  await ch.unary('/t.S/Slow', Buffer.from('settings heard'));
  const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => ch.unary('/t.S/Slow', Buffer.from(`call ${i}`))));
  t.same(answers.map(String), [1, 2, 3, 4, 5, 6].map((i) => `call ${i}`));
  t.equal(most, 2, 'never more than 2 at once on the server');
  // 3 MiB is far past the 64 KiB windows a connection starts with: sent as the server gives window.
  const big = Buffer.alloc(3 << 20, 7);
  t.ok((await ch.unary('/t.S/Slow', big)).equals(big), 'a 3 MiB request echoed');
});

t.test('calls waiting for the stream limit when the session closes still go out, then it ends', async (t) => {
  const { srv } = await serve(t, {
    '/t.S/Slow': {
      kind: 'unary', handle: async (req) => {
        await pause(50);
        return req;
      },
    },
  });
  srv.server.updateSettings({ maxConcurrentStreams: 1 });
  const port = (srv.server.address() as AddressInfo).port;
  const session = new H2Session(connectTcp(port, '127.0.0.1'), { authority: `http://127.0.0.1:${port}` });
  await new Promise((r) => session.once('remoteSettings', r));
  const statuses = [1, 2, 3].map(() => new Promise<string>((resolve) => {
    const st = session.request({ ':method': 'POST', ':path': '/t.S/Slow', 'content-type': 'application/grpc' });
    let status = 'none';
    st.on('trailers', (h: Record<string, string>) => {
      status = h['grpc-status']!;
    });
    st.on('close', () => resolve(status));
    st.end(Buffer.from([0, 0, 0, 0, 1, 7]));
  }));
  session.close();
  t.same(await Promise.all(statuses), ['0', '0', '0'], 'each answered OK');
  await new Promise((r) => (session.destroyed ? r(undefined) : session.once('close', r)));
  t.ok(session.destroyed, 'and the connection ended');
});

t.test('trailers larger than a frame arrive in CONTINUATION frames', async (t) => {
  const long = 'x'.repeat(40_000);
  const { ch } = await serve(t, { '/t.S/Fail': { kind: 'unary', handle: () => Promise.reject(new Error(long)) } });
  await t.rejects(ch.unary('/t.S/Fail', Buffer.from('x')), { code: Status.INTERNAL, message: long });
});

t.test('a server that says GOAWAY: the call on it finishes, the next one connects again', async (t) => {
  const { srv, ch } = await serve(t, {
    '/t.S/Echo': { kind: 'unary', handle: async (req) => req },
    '/t.S/Slow': {
      kind: 'unary', handle: async (req) => {
        await pause(200);
        return req;
      },
    },
  });
  let sessions = 0;
  srv.server.on('session', (s) => {
    sessions++;
    setTimeout(() => s.close(), 50);
  });
  t.equal(String(await ch.unary('/t.S/Slow', Buffer.from('finished'))), 'finished', 'open at GOAWAY: it finishes');
  await pause(100);
  t.equal(String(await ch.unary('/t.S/Echo', Buffer.from('again'))), 'again');
  t.equal(sessions, 2, 'a second connection');
});

t.test('servers that break the protocol: the call fails naming what broke, nothing throws', async (t) => {
  const cases: [string, (c: Socket) => void, RegExp][] = [
    ['a frame over 16 KiB', (c) => c.write(encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(20_004))),
      /FRAME_SIZE_ERROR.*20004 bytes/],
    ['a header block HPACK cannot read', (c) => c.write(Buffer.concat([encodeFrame(FrameType.SETTINGS, 0, 0),
      encodeFrame(FrameType.HEADERS, 4, 1, Buffer.from([0x80]))])), /COMPRESSION_ERROR.*index 0/],
    ['a WINDOW_UPDATE of 0', (c) => c.write(Buffer.concat([encodeFrame(FrameType.SETTINGS, 0, 0),
      encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(4))])), /PROTOCOL_ERROR.*WINDOW_UPDATE of 0/],
    ['a WINDOW_UPDATE cut short', (c) => c.write(Buffer.concat([encodeFrame(FrameType.SETTINGS, 0, 0),
      encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(2))])), /PROTOCOL_ERROR/],
    ['HTTP/1.1', (c) => c.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'),
      /answered in HTTP\/1 \("HTTP\/1.1 400 Bad Request"\), not HTTP\/2/],
  ];
  for (const [what, answer, why] of cases) {
    const server = createNetServer((c) => c.once('data', () => answer(c)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const ch = new GrpcChannel(`127.0.0.1:${(server.address() as AddressInfo).port}`, { http2: 'own' });
    await t.rejects(ch.unary('/t.S/Echo', Buffer.from('x'), { deadlineMs: 3000 }),
      { code: Status.UNAVAILABLE, message: why }, what);
    ch.close();
    server.close();
  }
});

t.test('a plugin\'s client process never loads node\'s http2 or TLS', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h2-session-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const socket = join(dir, 'api.sock');
  const srv = grpcHttp2Server({
    methods: new Map([['/t.S/Echo', { kind: 'unary', handle: async (req: Buffer) => req }]]), maxRequestBytes: 1 << 20,
    toStatus: (e) => ({ code: Status.INTERNAL, message: String(e) }),
  });
  await srv.listen({ path: socket });
  t.teardown(() => void srv.stop(0));
  const script = `
    import { RemoteState } from ${JSON.stringify(new URL('../client.ts', import.meta.url).pathname)};
    const state = new RemoteState('unix://${socket}');
    const answer = await state.unary('/t.S/Echo', Buffer.from('plugin'));
    state.close();
    console.log(JSON.stringify({ answer: String(answer), modules: process.moduleLoadList }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import=tsx', '--input-type=module', '-e', script]);
  const { answer, modules } = JSON.parse(stdout) as { answer: string; modules: string[] };
  t.equal(answer, 'plugin', 'the call went through our HTTP/2');
  t.same(modules.filter((m) => /^NativeModule (http2|tls|_tls_wrap|https?|internal\/http2\/.*)$/.test(m)), [],
    'none of node\'s http2, TLS or HTTP modules loaded');
});
