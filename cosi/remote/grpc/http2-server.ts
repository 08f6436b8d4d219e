// http2-server: an http2 server whose streams are gRPC calls (server.ts), and the
// session bookkeeping any of our http2 servers needs: stop() ends the sessions that
// never finish by themselves (watches), a session without open calls is closed after
// an idle time, and the longest-idle session can make room for a new connection.
import { createServer, type Http2Server, type Http2SecureServer, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { handleGrpcStream, type GrpcServerOptions } from './server.ts';
import { msSinceStart } from '../../monotonic.ts';

export interface GrpcHttp2Server {
  readonly server: Http2Server;
  /** Listens on a port (0 picks one) or a unix socket path; resolves with the port (0 for a path). */
  listen(where: { host: string; port: number } | { path: string }): Promise<number>;
  /** Stops listening, asks open calls to end, cuts them after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface Sessions {
  readonly size: number;
  all(): Iterable<Http2Session>;
  /**
   * Closes the oldest session that never made a call, to make room for a new connection; false when
   * there is none (a client that made calls keeps its connection until it is idle too long).
   */
  closeUnused(): boolean;
  /** Stops the server listening, asks open calls to end, cuts them after `graceMs`. */
  stop(server: Http2Server | Http2SecureServer, graceMs?: number): Promise<void>;
}

interface Entry { open: number; calls: number; idleSince: number; timer?: NodeJS.Timeout }

/** Keeps `server`'s sessions; one with no open call for `idleMs()` is closed (0: never). */
export function trackSessions(server: Http2Server | Http2SecureServer, idleMs: () => number): Sessions {
  const sessions = new Map<Http2Session, Entry>();
  const idle = (s: Http2Session, e: Entry) => {
    e.idleSince = msSinceStart();
    const ms = idleMs();
    if (ms > 0) e.timer = setTimeout(() => {
      if (e.open === 0) s.close();
    }, ms);
  };
  server.on('session', (s: Http2Session) => {
    const e: Entry = { open: 0, calls: 0, idleSince: msSinceStart() };
    sessions.set(s, e);
    idle(s, e);
    s.once('close', () => {
      clearTimeout(e.timer);
      sessions.delete(s);
    });
  });
  server.on('stream', (stream) => {
    const e = sessions.get(stream.session!);
    if (!e) return;
    e.calls++;
    if (e.open++ === 0) clearTimeout(e.timer);
    stream.once('close', () => {
      if (--e.open === 0) idle(stream.session!, e);
    });
  });
  return {
    get size() { return sessions.size; },
    all: () => [...sessions.keys()],
    closeUnused() {
      let best: [Http2Session, Entry] | undefined;
      for (const [s, e] of sessions) if (e.calls === 0 && (!best || e.idleSince < best[1].idleSince)) best = [s, e];
      if (!best) return false;
      sessions.delete(best[0]);
      best[0].destroy();
      return true;
    },
    async stop(srv, graceMs = 1000) {
      srv.close();
      for (const s of sessions.keys()) s.close();
      if (sessions.size) await new Promise((r) => setTimeout(r, graceMs).unref());
      for (const s of sessions.keys()) s.destroy();
    },
  };
}

export function grpcHttp2Server(o: GrpcServerOptions): GrpcHttp2Server {
  const server = createServer({ settings: { maxConcurrentStreams: 1024 } });
  server.on('stream', (stream, headers) => handleGrpcStream(o, stream, headers));
  const sessions = trackSessions(server, () => 0);
  // Small messages go out at once (no Nagle delay waiting for an ACK); a unix socket has no such delay.
  server.on('connection', (socket: Socket) => {
    if (typeof socket.setNoDelay === 'function' && socket.remoteAddress) socket.setNoDelay(true);
  });
  return {
    server,
    listen: (where) => new Promise((resolve, reject) => {
      server.once('error', reject);
      const done = () => {
        server.off('error', reject);
        const a = server.address();
        resolve(typeof a === 'object' && a ? a.port : 0);
      };
      if ('path' in where) server.listen(where.path, done);
      else server.listen(where.port, where.host, done);
    }),
    stop: (graceMs) => sessions.stop(server, graceMs),
  };
}
