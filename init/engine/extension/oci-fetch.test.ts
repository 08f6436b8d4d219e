// An extension's image pulled from a registry of the test's own on loopback (machinery/oci/test-registry.ts) as the
// machine pulls it: unpacked, its manifest made from the image's config and label, kept as <digest>.oci and found
// there the next time without a blob asked again; signed in with credentials; and each misbehaving answer refused
// with its reason, in bounded memory, with nothing left behind (no partial, no kept tree).
import t from 'tap';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { ociImage, startTestRegistry } from '../../../machinery/oci/test-registry.ts';
import { RefusedImage } from './fetch.ts';
import { ociImagePath, pullOciImage } from './oci-fetch.ts';

const registry = await startTestRegistry();
t.teardown(() => registry.close());
const dir = mkdtempSync(join(tmpdir(), 'oci-fetch-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const image = await ociImage({ 'bin/web': '#!/bin/sh\nexec sleep 1000\n', 'srv/index.html': 'hello\n' }, {
  Entrypoint: ['web', '--port', '8080'], Env: ['PATH=/bin'],
  Labels: { 'dev.appliance.manifest': 'outputs: []\nmemory: 32MiB\nvolumes: [{name: data, path: /var/data}]\n',
    'org.opencontainers.image.version': '2.1.0' },
});
registry.add(image);
const hex = image.digest.slice('sha256:'.length);
const source = (repo: string, digest = image.digest) => `oci://${registry.host}/${repo}@${digest}`;
const pull = (repo: string, o: { name?: string; sha256?: string; creds?: boolean } = {}) => pullOciImage({
  name: o.name ?? 'web', source: source(repo), sha256: o.sha256 ?? hex, dir, access: { insecure: true,
    ...(o.creds ? { credentials: { username: 'ci', password: 'pw' } } : {}) },
});
const leftovers = () => readdirSync(dir).filter((n) => n.startsWith('.'));

t.test('pulled, made an extension, kept; the next pull asks for nothing', async (t) => {
  const got = await pull('apps/web');
  if (got instanceof Error) throw got;
  t.equal(got.path, ociImagePath(dir, hex));
  t.notOk(got.reused);
  t.equal(readFileSync(join(got.path, 'srv/index.html'), 'utf8'), 'hello\n');
  const manifest = YAML.parse(readFileSync(join(got.path, 'manifest.yaml'), 'utf8')) as Record<string, unknown>;
  t.match(manifest, { name: 'web', version: '2.1.0', executable: '/bin/web', args: ['--port', '8080'],
    memory: '32MiB', ready: 'started' }, 'from the config and the label, as appliance build makes it');
  for (const p of ['proc', 'dev', 'tmp', 'run', 'var/data']) t.ok(lstatSync(join(got.path, p)).isDirectory(), p);
  t.equal(lstatSync(got.path).mode & 0o777, 0o755);
  t.same(leftovers(), [], 'its working directory is gone');
  const asked = registry.seen.length;
  const again = await pull('apps/web', { name: 'web2' });
  t.match(again, { reused: true, path: got.path });
  t.equal(registry.seen.length, asked, 'nothing asked of the registry');
  t.match(YAML.parse(readFileSync(join(got.path, 'manifest.yaml'), 'utf8')), { name: 'web2', version: '2.1.0' },
    'declared under another name: its manifest takes that name');
});

t.test('a private repository: a token from its realm with the credentials; refused without them', async (t) => {
  rmSync(ociImagePath(dir, hex), { recursive: true });
  const anonymous = await pull('private/web');
  t.ok(anonymous instanceof RefusedImage, 'refused: another try gets the same');
  t.match((anonymous as Error).message, /not authorized anonymously \(give credentials\)/);
  t.match(await pull('private/web', { creds: true }), { reused: false });
});

t.test('refused, each with its reason, nothing left behind, within bounded memory', async (t) => {
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    ['a source whose digest is not the sha256', () => pull('apps/web', { sha256: 'a'.repeat(64) }),
      /names sha256:[0-9a-f]{64}, its sha256 says a{64}: they must be one digest/],
    ['a tag', () => pullOciImage({ name: 'web', source: `oci://${registry.host}/apps/web:latest`, sha256: hex, dir,
      access: { insecure: true } }), /not by digest/],
    ['another manifest than its digest', () => pull('wrong'), /its bytes are sha256:/],
    ['a manifest of 100 MB', () => pull('huge'), /larger than 4194304 bytes/],
    ['a blob that never ends', () => pull('endless'), /more than the \d+ bytes its descriptor says/],
    ['a redirect loop', () => pull('loop'), /redirect/],
    ['401 forever', () => pull('locked'), /not authorized anonymously/],
  ];
  for (const [what, run, re] of cases) {
    rmSync(ociImagePath(dir, hex), { recursive: true, force: true });
    const before = process.memoryUsage().rss;
    const got = await run();
    t.ok(got instanceof RefusedImage, `${what}: refused for good`);
    t.match((got as Error).message, re, what);
    t.ok(process.memoryUsage().rss - before < 64 << 20, `${what}: memory stays bounded`);
    t.notOk(existsSync(ociImagePath(dir, hex)), `${what}: nothing kept`);
    t.same(leftovers(), [], `${what}: nothing half made left`);
  }
});

t.test('a registry that is not there: an Error to try again later, not a refusal', async (t) => {
  const got = await pullOciImage({ name: 'web', source: `oci://127.0.0.1:9/apps/web@${image.digest}`, sha256: hex, dir,
    access: { insecure: true } });
  t.ok(got instanceof Error && !(got instanceof RefusedImage));
  t.match((got as Error).message, /ECONNREFUSED/);
  t.same(leftovers(), []);
});
