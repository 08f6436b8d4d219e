// repository-server: an update repository folder served over HTTP on loopback for tests, as any static server
// serves it (a path under the folder, or 404), and told to lie on purpose: a path's bytes swapped for an attacker's.
// Counts what it served, metadata and bundles apart (the fleet test's bytes per machine).
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

export interface RepositoryServer {
  /** http://127.0.0.1:PORT/ */
  url: string;
  port: number;
  /** Paths served with these bytes instead of the folder's. */
  swapped: Map<string, Buffer>;
  /** Every path asked for, in order. */
  requests: string[];
  /** Bytes served under /metadata/ and the rest. */
  served: { metadata: number; targets: number };
  close(): Promise<void>;
}

export async function serveRepository(repo: string): Promise<RepositoryServer> {
  const swapped = new Map<string, Buffer>();
  const requests: string[] = [];
  const served = { metadata: 0, targets: 0 };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    const file = join(repo, path);
    const body = swapped.get(path) ?? (path.includes('..') || !existsSync(file) ? undefined : readFileSync(file));
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    if (path.startsWith('/metadata/')) served.metadata += body.length;
    else served.targets += body.length;
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/`, port, swapped, requests, served,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
