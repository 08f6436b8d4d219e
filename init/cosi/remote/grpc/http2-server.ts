// http2-server: an http2 server whose streams are gRPC calls (server.ts), keeping its
// sessions so that stop() can end the ones that never finish by themselves (watches).
import { createServer, type Http2Server, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { handleGrpcStream, type GrpcServerOptions } from './server.ts';

export interface GrpcHttp2Server {
  readonly server: Http2Server;
  /** Listens on a port (0 picks one) or a unix socket path; resolves with the port (0 for a path). */
  listen(where: { host: string; port: number } | { path: string }): Promise<number>;
  /** Stops listening, asks open calls to end, cuts them after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export function grpcHttp2Server(o: GrpcServerOptions): GrpcHttp2Server {
  const sessions = new Set<Http2Session>();
  const server = createServer({ settings: { maxConcurrentStreams: 1024 } });
  server.on('stream', (stream, headers) => handleGrpcStream(o, stream, headers));
  server.on('session', (s) => { sessions.add(s); s.once('close', () => sessions.delete(s)); });
  // Small messages go out at once (no Nagle delay waiting for an ACK); a unix socket has no such delay.
  server.on('connection', (socket: Socket) => {
    if (typeof socket.setNoDelay === 'function' && socket.remoteAddress) socket.setNoDelay(true);
  });
  return {
    server,
    listen: (where) => new Promise((resolve, reject) => {
      server.once('error', reject);
      const done = () => {
        server.off('error', reject); const a = server.address(); resolve(typeof a === 'object' && a ? a.port : 0);
      };
      if ('path' in where) server.listen(where.path, done); else server.listen(where.port, where.host, done);
    }),
    async stop(graceMs = 1000) {
      server.close();
      for (const s of sessions) s.close();
      if (sessions.size) await new Promise((r) => setTimeout(r, graceMs).unref());
      for (const s of sessions) s.destroy();
    },
  };
}
