// test-registry: for tests only, a registry of the test's own on loopback (the OCI Distribution API's GETs of
// manifests and blobs by digest), serving images the test makes from files (`ociImage`, layers by `tarOf`), and
// misbehaving on purpose by repository: `wrong` (a manifest that is not its digest), `huge` (a manifest of 100 MB),
// `endless` (every blob never ends), `loop` (blobs redirect forever), `locked` (401 forever, a token or not),
// `private...` (opened by the token its realm gives for the Basic credentials ci:pw). Every request is recorded in
// `seen`.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { MEDIA } from './media.ts';
import type { TarHeader } from './tar-read.ts';

const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** A tar archive of `entries`, as tests write layers. */
export async function tarOf(entries: { header: TarHeader; data?: string | Buffer }[]): Promise<Buffer> {
  const p = pack();
  for (const e of entries) p.entry(e.header, e.data ?? '');
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export interface TestImage {
  /** sha256:HEX of its manifest. */
  digest: string;
  manifest: Buffer;
  blobs: Map<string, Buffer>;
}

/** A one-layer image of `files` (path → content; mode 0755 for those under bin/), its config's run settings. */
export async function ociImage(
  files: Record<string, string>, config: { Entrypoint?: string[]; Env?: string[]; Labels?: Record<string, string> },
): Promise<TestImage> {
  const tar = await tarOf(Object.entries(files).map(([name, data]) => ({
    header: { name, type: 'file', mode: name.startsWith('bin/') ? 0o755 : 0o644 }, data,
  })));
  const layer = gzipSync(tar);
  const rootfs = { type: 'layers', diff_ids: [digestOf(tar)] };
  const cfg = json({ os: 'linux', architecture: 'amd64', config, rootfs });
  const desc = (b: Buffer, mediaType: string) => ({ mediaType, digest: digestOf(b), size: b.length });
  const manifest = json({ schemaVersion: 2, mediaType: MEDIA.ociManifest, config: desc(cfg, MEDIA.ociConfig),
    layers: [desc(layer, 'application/vnd.oci.image.layer.v1.tar+gzip')] });
  return { digest: digestOf(manifest), manifest, blobs: new Map([[digestOf(cfg), cfg], [digestOf(layer), layer]]) };
}

export interface TestRegistry {
  /** HOST:PORT */
  host: string;
  seen: string[];
  add(image: TestImage): void;
  close(): Promise<void>;
}

export async function startTestRegistry(): Promise<TestRegistry> {
  const manifests = new Map<string, Buffer>();
  const blobs = new Map<string, Buffer>();
  const seen: string[] = [];
  let host = '';
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${req.method} ${url.pathname}`);
    if (url.pathname === '/token') {
      // Anyone gets a token; only ci:pw one that opens `private`.
      const auth = req.headers.authorization;
      const ci = auth === `Basic ${Buffer.from('ci:pw').toString('base64')}`;
      res.writeHead(ci || !auth ? 200 : 401, { 'content-type': 'application/json' })
        .end(json({ token: ci ? 'T-ci' : 'T-anon' }));
      return;
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/(sha256:[0-9a-f]{64})x*$/.exec(url.pathname);
    if (!m) return void res.writeHead(404).end();
    const [, repo, kind, digest] = m as unknown as [string, string, string, string];
    const challenge = (realm: string) => res.writeHead(401, {
      'www-authenticate': `Bearer realm="http://${host}${realm}",service="test",scope="repository:${repo}:pull"`,
    }).end();
    if (repo === 'locked') return void challenge('/token');
    if (repo.startsWith('private') && req.headers.authorization !== 'Bearer T-ci') return void challenge('/token');
    if (repo === 'wrong' && kind === 'manifests') {
      return void res.writeHead(200, { 'content-type': MEDIA.ociManifest }).end('{"not":"it"}');
    }
    if (repo === 'huge' && kind === 'manifests') return void endless(res, 100);
    if (repo === 'endless' && kind === 'blobs') return void endless(res, Infinity);
    if (repo === 'loop' && kind === 'blobs') {
      return void res.writeHead(302, { location: url.pathname.endsWith('x') ? url.pathname.slice(0, -1)
        : `${url.pathname}x` }).end();
    }
    const b = (kind === 'manifests' ? manifests : blobs).get(digest);
    if (!b) return void res.writeHead(404).end();
    const type = kind === 'manifests' ? MEDIA.ociManifest : 'application/octet-stream';
    res.writeHead(200, { 'content-type': type, 'content-length': b.length }).end(b);
  };
  const server = createServer(answer);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host, seen,
    add(image) {
      manifests.set(image.digest, image.manifest);
      for (const [d, b] of image.blobs) blobs.set(d, b);
    },
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** `mib` MiB of spaces (Infinity: until the client goes), with no length said. */
function endless(res: ServerResponse, mib: number): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const chunk = Buffer.alloc(1 << 20, 32);
  let sent = 0;
  const more = () => {
    while (sent < mib && !res.destroyed && res.write(chunk)) sent++;
    if (res.destroyed) return;
    if (sent < mib) res.once('drain', more);
    else res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  more();
}
