// Our gRPC server and client on a real socket: requests over the size limit.
import t from 'tap';
import { GrpcChannel } from './client.ts';
import { Status } from './framing.ts';
import { grpcHttp2Server } from './http2-server.ts';

t.test('a request over the limit is answered RESOURCE_EXHAUSTED, however large; the connection lives', async (t) => {
  const srv = grpcHttp2Server({
    methods: new Map([['/t.S/Echo', { kind: 'unary', handle: async (req: Buffer) => req }]]),
    maxRequestBytes: 1 << 20, toStatus: (e) => ({ code: Status.INTERNAL, message: String(e) }),
  });
  const port = await srv.listen({ host: '127.0.0.1', port: 0 });
  const ch = new GrpcChannel(`127.0.0.1:${port}`);
  const alive = setInterval(() => undefined, 1000); // the server and the channel hold no event loop by themselves
  t.teardown(() => { clearInterval(alive); ch.close(); void srv.stop(0); });
  // 20 MiB is 1,280 DATA frames: more than node's limit of invalid frames, were the stream closed early.
  for (const size of [(1 << 20) + 1, 5 << 20, 20 << 20]) {
    await t.rejects(ch.unary('/t.S/Echo', Buffer.alloc(size)),
      { code: Status.RESOURCE_EXHAUSTED, message: new RegExp(`${size} bytes exceeds the limit of 1048576`) },
      `${size} bytes`);
  }
  t.equal((await ch.unary('/t.S/Echo', Buffer.from('still here'))).toString(), 'still here');
});
