// metadata-servers: real HTTP servers on loopback that play a platform's metadata
// service for tests (host tests and QEMU tests through guestfwd). Strict like the real
// ones (IMDSv2 tokens that expire, GCE's Metadata-Flavor both ways) and able to
// misbehave on purpose (500, slow, garbage, truncated) for the first requests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestServer { port: number; log: string[]; handler: Handler; close(): void }

export async function startServer(handler: Handler = notFound): Promise<TestServer> {
  const s: TestServer = {
    port: 0, log: [], handler,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
  const server = createServer((q, r) => {
    s.log.push(`${q.method} ${q.url}`);
    s.handler(q, r);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.port = (server.address() as AddressInfo).port;
  return s;
}

export const notFound: Handler = (_q, s) => {
  s.statusCode = 404;
  s.end();
};

/** Serves fixed paths (e.g. a NoCloud seed: /seed/meta-data); anything else is 404. */
export const files = (byPath: Record<string, string>): Handler => (q, s) => {
  const v = byPath[q.url ?? ''];
  if (v === undefined) notFound(q, s);
  else s.end(v);
};

export interface ImdsOptions {
  meta?: Record<string, string>;
  userData?: string;
  /** Answer the token PUT with this status instead (403/404/405 mean: IMDSv1 here). */
  putStatus?: number;
  /** Requests a token is good for (then 401: it expired). */
  uses?: number;
}

export const EC2_META = {
  'instance-id': 'i-0123456789abcdef0', 'local-ipv4': '10.0.2.15', 'local-hostname': 'ip-10-0-2-15.ec2.internal',
  'placement/availability-zone': 'eu-west-1b', 'instance-type': 't3.small',
};

/** A strict IMDSv2: a GET without a good token is 401. */
export function imds(o: ImdsOptions = {}): Handler {
  const tokens = new Map<string, number>();
  let n = 0;
  const meta: Record<string, string> = o.meta ?? EC2_META;
  return (q, s) => {
    if (q.url === '/latest/api/token') {
      if (o.putStatus) {
        s.statusCode = o.putStatus;
        s.end();
        return;
      }
      if (q.method !== 'PUT' || !q.headers['x-aws-ec2-metadata-token-ttl-seconds']) {
        s.statusCode = 400;
        s.end();
        return;
      }
      const tok = `tok${++n}`;
      tokens.set(tok, o.uses ?? 100);
      s.end(tok);
      return;
    }
    const tok = q.headers['x-aws-ec2-metadata-token'] as string | undefined;
    if (!o.putStatus) {
      const left = tok ? tokens.get(tok) : undefined;
      if (!left) {
        s.statusCode = 401;
        s.end();
        return;
      }
      tokens.set(tok!, left - 1);
    }
    const path = (q.url ?? '').replace(/^\/latest\//, '');
    const v = path === 'user-data' ? o.userData : meta[path.replace(/^meta-data\//, '')];
    if (v === undefined) notFound(q, s);
    else s.end(v);
  };
}

export const GCE_VALUES = {
  id: '4567890123', hostname: 'vm1.c.project.internal', zone: 'projects/12/zones/europe-west1-b',
  'machine-type': 'projects/12/machineTypes/e2-medium',
};

/** GCE: refuses a request without Metadata-Flavor: Google (403) and marks its answers with it. */
export function gceMetadata(values: Record<string, string>, o: { flavorBack?: boolean } = {}): Handler {
  return (q, s) => {
    if (q.headers['metadata-flavor'] !== 'Google') {
      s.statusCode = 403;
      s.end('Missing Metadata-Flavor');
      return;
    }
    if (o.flavorBack ?? true) s.setHeader('Metadata-Flavor', 'Google');
    const v = values[(q.url ?? '').replace('/computeMetadata/v1/instance/', '')];
    if (v === undefined) notFound(q, s);
    else s.end(v);
  };
}

export type Fault = '500' | 'slow' | 'garbage' | 'truncated';

/** The first requests get these faults, one each, in order; then `then` answers. */
export function faulty(faults: Fault[], then: Handler, slowMs = 10_000): Handler {
  const left = [...faults];
  return (q, s) => {
    const f = left.shift();
    if (!f) {
      then(q, s);
      return;
    }
    if (f === '500') {
      s.statusCode = 500;
      s.end('internal error');
      return;
    }
    if (f === 'slow') {
      setTimeout(() => {
        if (!s.destroyed) s.end('late');
      }, slowMs);
      return;
    }
    if (f === 'garbage') {
      s.socket?.end('\x00\xffnot http at all\r\n\r\n');
      return;
    }
    s.setHeader('content-length', '1000');
    s.write('a part of the answer');
    setTimeout(() => s.destroy(), 20);
  };
}
