// Our gRPC server and client on a real socket: requests over the size limit, keepalive on a silent peer. Each
// case runs with both HTTP/2 clients a plaintext channel may use: ours (h2-session.ts) and node's.
import t from 'tap';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { GrpcChannel } from './client.ts';
import { Status } from './framing.ts';
import { grpcHttp2Server } from './http2-server.ts';
import type { Method } from './server.ts';
import { createServer as createHttp2Server } from 'node:http2';

for (const http2 of ['own', 'node'] as const) {

  t.test(`${http2} HTTP/2: a request over the limit is answered RESOURCE_EXHAUSTED, however large; the connection `
    + 'lives', async (t) => {
    const srv = grpcHttp2Server({
      methods: new Map([['/t.S/Echo', { kind: 'unary', handle: async (req: Buffer) => req }]]),
      maxRequestBytes: 1 << 20, toStatus: (e) => ({ code: Status.INTERNAL, message: String(e) }),
    });
    const port = await srv.listen({ host: '127.0.0.1', port: 0 });
    const ch = new GrpcChannel(`127.0.0.1:${port}`, { http2 });
    const alive = setInterval(() => undefined, 1000); // the server and the channel hold no event loop by themselves
    t.teardown(() => {
      clearInterval(alive);
      ch.close();
      void srv.stop(0);
    });
    // 20 MiB is 1,280 DATA frames: more than node's limit of invalid frames, were the stream closed early.
    for (const size of [(1 << 20) + 1, 5 << 20, 20 << 20]) {
      await t.rejects(ch.unary('/t.S/Echo', Buffer.alloc(size)),
        { code: Status.RESOURCE_EXHAUSTED, message: new RegExp(`${size} bytes exceeds the limit of 1048576`) },
        `${size} bytes`);
    }
    t.equal((await ch.unary('/t.S/Echo', Buffer.from('still here'))).toString(), 'still here');
  });

  t.test(`${http2} HTTP/2: a silent peer fails the keepalive, and its pings stop (no throw later)`, async (t) => {
    const srv = grpcHttp2Server({
      methods: new Map([['/t.S/Echo', { kind: 'unary', handle: async (req: Buffer) => req }]]),
      maxRequestBytes: 1 << 20, toStatus: (e) => ({ code: Status.INTERNAL, message: String(e) }),
    });
    const port = await srv.listen({ host: '127.0.0.1', port: 0 });
    // A proxy that forwards until told to go silent (as a machine that rebooted under the connection).
    let silent = false;
    const proxy = createServer((c) => {
      const up = connect(port, '127.0.0.1');
      c.on('data', (d) => {
        if (!silent) up.write(d);
      });
      up.on('data', (d) => {
        if (!silent) c.write(d);
      });
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const ch = new GrpcChannel(`127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      { keepaliveMs: 100, keepaliveTimeoutMs: 200, http2 });
    const thrown: unknown[] = [];
    const onUncaught = (e: unknown) => {
      thrown.push(e);
    };
    process.on('uncaughtException', onUncaught);
    t.teardown(() => {
      process.off('uncaughtException', onUncaught);
      ch.close();
      proxy.close();
      void srv.stop(0);
    });
    t.equal((await ch.unary('/t.S/Echo', Buffer.from('hi'))).toString(), 'hi');
    silent = true;
    // The keepalive fails within 300 ms; a dozen more intervals pass after that.
    await new Promise((r) => setTimeout(r, 1500));
    t.same(thrown.map(String), [], 'nothing thrown by pings on the ended session');
    silent = false;
    t.equal((await ch.unary('/t.S/Echo', Buffer.from('again'))).toString(), 'again', 'a new connection serves');
  });

  t.test(`${http2} HTTP/2: a handler that throws before its first await fails its call, not the server`, async (t) => {
    const refuse = () => {
      throw new Error('refused at the gate');
    };
    const srv = grpcHttp2Server({
      methods: new Map<string, Method>([
        ['/t.S/Unary', { kind: 'unary', handle: refuse }],
        ['/t.S/Stream', { kind: 'server-stream', handle: refuse }],
        ['/t.S/Echo', { kind: 'unary', handle: async (req: Buffer) => req }],
      ]),
      maxRequestBytes: 1 << 20, toStatus: (e) => ({ code: Status.PERMISSION_DENIED, message: (e as Error).message }),
    });
    const port = await srv.listen({ host: '127.0.0.1', port: 0 });
    const ch = new GrpcChannel(`127.0.0.1:${port}`, { http2 });
    const alive = setInterval(() => undefined, 1000);
    t.teardown(() => {
      clearInterval(alive);
      ch.close();
      void srv.stop(0);
    });
    await t.rejects(ch.unary('/t.S/Unary', Buffer.from('x')),
      { code: Status.PERMISSION_DENIED, message: /at the gate/ });
    const stream = ch.serverStream('/t.S/Stream', Buffer.from('x'));
    stream.onMessage(() => undefined);
    t.match(await stream.done, { code: Status.PERMISSION_DENIED, message: /at the gate/ });
    t.equal((await ch.unary('/t.S/Echo', Buffer.from('still here'))).toString(), 'still here', 'the server lives');
  });

  t.test(`${http2} HTTP/2: a slow reader of a server that answers and goes away is never told OK with messages lost`,
    async (t) => {
      const message = (n: number) => Buffer.concat([Buffer.from([0, 0, 0, 0, 4]), Buffer.alloc(4, n)]);
      const server = createHttp2Server();
      const sockets: Socket[] = [];
      server.on('connection', (c: Socket) => sockets.push(c));
      server.on('stream', (st) => {
        st.on('data', () => undefined);
        st.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
        st.write(message(1));
        setTimeout(() => {
          st.write(message(2));
          setTimeout(() => st.end(message(3)), 20);
        }, 20);
        // The server's process ends right after its answer: the connection goes with it.
        st.on('close', () => setTimeout(() => sockets.forEach((c) => c.destroy()), 10));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const ch = new GrpcChannel(`127.0.0.1:${(server.address() as AddressInfo).port}`, { http2 });
      t.teardown(() => {
        ch.close();
        server.close();
      });
      const call = ch.serverStream('/t.S/Three', Buffer.alloc(0));
      const got: number[] = [];
      call.onMessage(async (m) => {
        got.push(m[0]!);
        await new Promise((r) => setTimeout(r, 100));
      });
      const outcome = await call.done;
      if (http2 === 'own') {
        t.equal(outcome, undefined, 'OK');
        t.same(got, [1, 2, 3], 'every message, in order');
      } else {
        // Node's stream drops what was not read when the connection goes: said, never an OK with messages missing.
        t.ok(outcome === undefined ? got.length === 3 : outcome.code === Status.UNAVAILABLE,
          `OK with every message, or UNAVAILABLE: ${outcome?.message ?? 'OK'} after ${got.length}`);
      }
    });
}
