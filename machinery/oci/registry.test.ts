// The registry client against a registry of the test's own on loopback, strict and misbehaving on purpose: an image
// pulled by digest (an index resolved to linux/amd64, a token from the registry's realm), and each wrong answer
// refused with its reason within bounded memory: another digest, a manifest of 100 MB, a blob that never ends or
// goes quiet, a redirect loop, 401 forever, 404; and references that are not by digest.
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MEDIA } from './media.ts';
import { parseChallenge, parseOciReference, RegistryClient, RegistryRefused, type Descriptor } from './registry.ts';

const digest = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const LAYER_TYPE = 'application/vnd.oci.image.layer.v1.tar';

// The image: a config, one layer, its manifest, and an index naming it for linux/amd64 beside an arm64 one.
const config = json({ architecture: 'amd64', os: 'linux', config: { Cmd: ['/bin/hello'] } });
const layer = Buffer.alloc(3000, 7);
const desc = (b: Buffer, mediaType: string): Descriptor => ({ mediaType, digest: digest(b), size: b.length });
const manifest = json({ schemaVersion: 2, mediaType: MEDIA.ociManifest, config: desc(config, MEDIA.ociConfig),
  layers: [desc(layer, LAYER_TYPE)] });
const index = json({ schemaVersion: 2, mediaType: MEDIA.ociIndex, manifests: [
  { ...desc(Buffer.from('other'), MEDIA.ociManifest), platform: { os: 'linux', architecture: 'arm64' } },
  { ...desc(manifest, MEDIA.ociManifest), platform: { os: 'linux', architecture: 'amd64' } }] });
const armOnly = json({ schemaVersion: 2, mediaType: MEDIA.ociIndex, manifests: [
  { ...desc(Buffer.from('other'), MEDIA.ociManifest), platform: { os: 'linux', architecture: 'arm64' } }] });
const blobs = new Map([[digest(config), config], [digest(layer), layer]]);
const manifests = new Map([[digest(manifest), manifest], [digest(index), index], [digest(armOnly), armOnly]]);

const seen: string[] = [];
/** Per repository, how the registry misbehaves. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  seen.push(`${req.method} ${url.pathname}${req.headers.authorization ? ` [${req.headers.authorization}]` : ''}`);
  if (url.pathname === '/token') {
    const basic = req.headers.authorization;
    const ok = url.searchParams.get('service') === 'test-registry'
      && url.searchParams.get('scope') === 'repository:private/app:pull'
      && (basic === undefined || basic === `Basic ${Buffer.from('ci:pw').toString('base64')}`);
    res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' })
      .end(json({ token: basic ? 'T-ci' : 'T-anon' }));
    return;
  }
  if (url.pathname.startsWith('/v2/loop/blobs/')) {
    res.writeHead(302, { location: url.pathname.endsWith('x') ? url.pathname.slice(0, -1) : `${url.pathname}x` }).end();
    return;
  }
  const m = /^\/v2\/(.+)\/(manifests|blobs)\/(sha256:[0-9a-f]{64})$/.exec(url.pathname);
  if (!m) {
    res.writeHead(404).end();
    return;
  }
  const [, repo, kind, dig] = m as unknown as [string, string, string, string];
  const send = (b: Buffer | undefined, type = 'application/octet-stream') => {
    if (!b) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': type, 'content-length': b.length }).end(b);
  };
  if (repo === 'private/app' || repo === 'private/forever') {
    const want = repo === 'private/app' ? 'Bearer T-ci' : 'never';
    if (req.headers.authorization !== want) {
      res.writeHead(401, { 'www-authenticate': `Bearer realm="http://127.0.0.1:${port()}/token",`
        + 'service="test-registry",scope="repository:private/app:pull"' }).end();
      return;
    }
  }
  if (repo === 'wrong' && kind === 'manifests') return void send(Buffer.from('{"not":"it"}'), MEDIA.ociManifest);
  if (repo === 'huge' && kind === 'manifests') {
    res.writeHead(200, { 'content-type': MEDIA.ociManifest });
    const chunk = Buffer.alloc(1 << 20, 32);
    let sent = 0;
    const more = () => {
      while (sent < 100 && res.write(chunk)) sent++;
      if (sent < 100) res.once('drain', more);
      else res.end();
    };
    more();
    return;
  }
  if (repo === 'endless' && kind === 'blobs') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const timer = setInterval(() => res.write(Buffer.alloc(64 << 10)), 1);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (repo === 'quiet' && kind === 'blobs') {
    res.writeHead(200, { 'content-length': layer.length }).write(layer.subarray(0, 100));
    return;
  }
  if (kind === 'manifests') return void send(manifests.get(dig), MEDIA.ociManifest);
  send(blobs.get(dig));
}
const server = createServer(answer);
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => server.close());
const port = () => (server.address() as AddressInfo).port;
const ref = (repo: string, d: string) => {
  const r = parseOciReference(`oci://127.0.0.1:${port()}/${repo}@${d}`);
  if (typeof r === 'string') throw new Error(r);
  return r;
};
const dir = mkdtempSync(join(tmpdir(), 'registry-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: Error) => e);

t.test('references: by digest only, each part checked', async (t) => {
  const d = `sha256:${'a'.repeat(64)}`;
  t.same(parseOciReference(`oci://registry.example:5000/team/app@${d}`),
    { registry: 'registry.example:5000', repository: 'team/app', digest: d });
  t.match(parseOciReference('oci://registry.example/app:1.0'), /not by digest \(a tag may point at another image/);
  t.match(parseOciReference('oci://registry.example/App@sha256:x'), /"App" is not a repository name/);
  t.match(parseOciReference(`oci://registry.example/app@sha512:${'a'.repeat(128)}`), /is not a sha256 digest/);
  t.match(parseOciReference(`https://registry.example/app@${d}`), /want oci:\/\/HOST\[:PORT\]\/REPOSITORY@sha256/);
  t.same(parseChallenge('Bearer realm="https://auth.example/token",service="reg",scope="repository:a:pull"'),
    { scheme: 'bearer', params: { realm: 'https://auth.example/token', service: 'reg', scope: 'repository:a:pull' } });
});

t.test('an index by digest: its linux/amd64 image, a token from the realm, every blob checked', async (t) => {
  seen.length = 0;
  const c = new RegistryClient(ref('private/app', digest(index)), { insecure: true,
    credentials: { username: 'ci', password: 'pw' } });
  const m = await c.manifest();
  t.same(m, { digest: digest(manifest), mediaType: MEDIA.ociManifest, config: desc(config, MEDIA.ociConfig),
    layers: [desc(layer, LAYER_TYPE)], bytes: manifest });
  await c.blob(m.layers[0]!, join(dir, 'layer'));
  t.same(readFileSync(join(dir, 'layer')), layer);
  t.match(seen, [`GET /v2/private/app/manifests/${digest(index)}`, /^GET \/token \[Basic /,
    `GET /v2/private/app/manifests/${digest(index)} [Bearer T-ci]`,
    `GET /v2/private/app/manifests/${digest(manifest)} [Bearer T-ci]`,
    `GET /v2/private/app/blobs/${digest(layer)} [Bearer T-ci]`], 'one token, asked once with the credentials');
  const arm = await refusal(new RegistryClient(ref('public', digest(armOnly)), { insecure: true }).manifest());
  t.ok(arm instanceof RegistryRefused);
  t.match(arm, /no linux\/amd64 image in its index \(it has linux\/arm64\)/);
});

t.test('misbehaving: each refused with its reason, nothing left half written, memory bounded', async (t) => {
  const client = (repo: string, d = digest(manifest), idleMs?: number) =>
    new RegistryClient(ref(repo, d), { insecure: true, timeoutMs: 20_000, ...(idleMs ? { idleMs } : {}) });
  const wrong = await refusal(client('wrong').manifest());
  t.ok(wrong instanceof RegistryRefused);
  t.match(wrong, new RegExp(`manifest ${digest(manifest)}: its bytes are sha256:`), 'another digest');
  const before = process.memoryUsage().rss;
  const huge = await refusal(client('huge').manifest());
  t.ok(huge instanceof RegistryRefused);
  t.match(huge, /larger than 4194304 bytes/, 'a manifest of 100 MB');
  t.ok(process.memoryUsage().rss - before < 64 << 20, 'not held in memory');
  const layerDesc = desc(layer, LAYER_TYPE);
  const endless = await refusal(client('endless').blob(layerDesc, join(dir, 'endless')));
  t.ok(endless instanceof RegistryRefused);
  t.match(endless, /more than the 3000 bytes its descriptor says/, 'a blob that never ends');
  const quiet = await refusal(client('quiet', digest(manifest), 300).blob(layerDesc, join(dir, 'quiet')));
  t.notOk(quiet instanceof RegistryRefused, 'a server gone quiet is the network\'s: tried again later');
  t.match(quiet, /nothing received for 0\.3 s/);
  const loop = await refusal(client('loop').blob(layerDesc, join(dir, 'loop')));
  t.ok(loop instanceof RegistryRefused);
  t.match(loop, /a redirect loop/);
  const forever = await refusal(client('private/forever').manifest());
  t.ok(forever instanceof RegistryRefused);
  t.match(forever, /not authorized anonymously \(give credentials\)/, '401 forever: asked once with a token');
  const missing = await refusal(client('public', `sha256:${'0'.repeat(64)}`).manifest());
  t.ok(missing instanceof RegistryRefused);
  t.match(missing, /not found \(HTTP 404\)/);
  const lying = await refusal(client('public').blob({ ...layerDesc, size: 10 }, join(dir, 'short')));
  t.match(lying, /3000 bytes, its descriptor says 10/, 'a Content-Length past the descriptor: not even read');
  t.same(readdirSync(dir).filter((f) => f !== 'layer'), [], 'nothing half written');
  t.notOk(existsSync(join(dir, 'endless.partial')));
});
