// The install folder over HTTP, from a real server on loopback that also misbehaves: a missing
// folder, a manifest that is not one or is far too large, a disk whose announced length is not
// the manifest's, and a connection cut half way, which the writer then refuses.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testPayload } from './testing/payload.ts';
import { fetchPayload, type PayloadSource } from './payload-source.ts';
import { writeImage } from './write-image.ts';

const disk = Buffer.concat([randomBytes(64 << 10), Buffer.alloc(192 << 10)]);
const { gz, manifest } = testPayload(disk);

const server: Server = createServer((req, res) => {
  const [, folder, file] = /^\/(\w+)\/(.*)$/.exec(req.url ?? '') ?? [];
  const send = (body: Buffer | string, length?: number) => {
    res.writeHead(200, { 'content-length': length ?? Buffer.byteLength(body) });
    res.end(body);
  };
  if (file === 'install.json') {
    if (folder === 'good' || folder === 'cut' || folder === 'length') return send(JSON.stringify(manifest));
    if (folder === 'huge') return send('{"kind":"' + 'x'.repeat(100 << 10) + '"}');
    if (folder === 'notjson') return send('<html>hello</html>');
  }
  if (file === 'appliance.raw.gz') {
    if (folder === 'good') return send(gz);
    if (folder === 'length') return send(gz.subarray(0, 100), 100);
    if (folder === 'cut') {
      res.writeHead(200, { 'content-length': gz.length });
      res.write(gz.subarray(0, gz.length >> 1), () => res.destroy());
      return undefined;
    }
  }
  res.writeHead(404).end();
  return undefined;
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => server.close());
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const dir = mkdtempSync(join(tmpdir(), 'payload-'));
const target = () => {
  const p = join(dir, `t${Math.random()}`);
  writeFileSync(p, Buffer.alloc(disk.length));
  return p;
};
const write = async (src: PayloadSource, to: string) => writeImage({
  compressed: await src.openDisk(), target: to, targetBytes: disk.length, source: 'the medium',
  image: src.manifest.disk, progress: () => {},
  dropCache: async () => {},
});

t.test('the folder, or its install.json, by URL: the manifest read, the disk streamed and written', async (t) => {
  for (const url of [`${base}/good`, `${base}/good/`, `${base}/good/install.json`]) {
    const src = await fetchPayload(url);
    if (src instanceof Error) {
      t.fail(src.message);
      continue;
    }
    t.equal(src.origin, `${base}/good/`);
    t.same(src.manifest, manifest);
  }
  const src = await fetchPayload(`${base}/good`) as PayloadSource;
  const to = target();
  await write(src, to);
  t.same(readFileSync(to), disk);
});

t.test('what a bad server says is named, with the URL', async (t) => {
  t.match((await fetchPayload(`${base}/missing`) as Error).message, `GET ${base}/missing/install.json: HTTP 404`);
  t.match((await fetchPayload(`${base}/huge`) as Error).message, /the answer is larger than 65536 bytes/);
  t.match((await fetchPayload(`${base}/notjson`) as Error).message, /install\.json: not JSON/);
  t.match((await fetchPayload('http://127.0.0.1:1/x') as Error).message,
    /GET http:\/\/127\.0\.0\.1:1\/x\/install\.json: .*ECONNREFUSED/);
  const short = await fetchPayload(`${base}/length`) as PayloadSource;
  await t.rejects(short.openDisk(), /100 bytes announced; the manifest says \d+/);
  const cut = await fetchPayload(`${base}/cut`) as PayloadSource;
  await t.rejects(write(cut, target()), /aborted|unexpected end|ECONNRESET|size/, 'a download cut half way fails');
});
