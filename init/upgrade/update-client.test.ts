// The update client against a repository our publisher wrote, served by a loopback HTTP server that can be told to
// lie: the channel and release read from a verified view, mirrors tried in order, a pinned root that changes starts
// afresh, and a release streamed with TUF's length and hashes checked on the way: a tampered bundle is refused and
// its consumer never receives its last chunk (the upgrader writes a slot only once a bundle is whole).
import t from 'tap';
import { createHash, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyFile, loadKeyFolders } from '../../image/release/tuf-keys.ts';
import { createRepository, rootFile, targetFilePath } from '../../image/release/tuf-repository.ts';
import { addRelease } from '../../image/release/channels.ts';
import { ALL_AT_ONCE } from '../../machinery/update/waves.ts';
import { serveRepository } from '../../image/release/testing/repository-server.ts';
import { UpdateClient } from './update-client.ts';

const dir = mkdtempSync(join(tmpdir(), 'update-client-'));
const repo = join(dir, 'repo');
const keysDir = join(dir, 'keys');
const roles = Object.fromEntries(['root', 'targets', 'snapshot', 'timestamp'].map((r) =>
  [r, { keys: [createPublicKey(generateKeyFile(keysDir, r).privateKey)], threshold: 1 }]));
const keys = loadKeyFolders([keysDir]);
createRepository(repo, { roles: roles as never }, keys, new Date());
// Big enough to arrive in several chunks.
const bundle = Buffer.alloc(3_000_000, 7);
addRelease(repo, keys, { name: 'web', version: '2.0.0', bundle, channel: 'stable', waves: [...ALL_AT_ONCE],
  now: new Date() });
const onDisk = targetFilePath(repo, 'releases/web-2.0.0.tar', createHash('sha256').update(bundle).digest('hex'));
t.ok(existsSync(onDisk), 'the publisher wrote the bundle under its hash');

const server = await serveRepository(repo);
t.teardown(() => server.close());
const url = server.url.replace(/\/$/, '');
const releasePath = `/targets/releases/${createHash('sha256').update(bundle).digest('hex')}.web-2.0.0.tar`;
/** The bundle's bytes the server sends instead of the real ones; undefined: the real ones. */
const lie = (bytes: Buffer | undefined) => {
  if (bytes) server.swapped.set(releasePath, bytes);
  else server.swapped.delete(releasePath);
};
const root = readFileSync(rootFile(repo, 1), 'utf8');

const client = (urls: string[], d = join(dir, 'machine')) =>
  new UpdateClient({ dir: d, urls, channel: 'stable', root });
const drain = async (c: UpdateClient, view: Awaited<ReturnType<UpdateClient['check']>>) => {
  const got: Buffer[] = [];
  try {
    for await (const chunk of c.stream(view.offered!.target!)) got.push(chunk);
    return { bytes: Buffer.concat(got) };
  } catch (e) {
    return { bytes: Buffer.concat(got), error: e as Error };
  }
};

t.test('a verified view: the channel, its release, the trusted versions; mirrors in order', async (t) => {
  const c = client(['http://127.0.0.1:1/', `${url}/`]);
  const view = await c.check();
  t.equal(view.url, `${url}/`, 'the dead mirror skipped');
  t.match(view.offered, { channel: { release: 'releases/web-2.0.0.tar', paused: false },
    release: { name: 'web', version: '2.0.0' } });
  t.same(view.versions, { root: 1, targets: 2, snapshot: 2, timestamp: 2 });
  t.ok(view.metadataBytes > 1000);
  const { bytes, error } = await drain(c, view);
  t.equal(error, undefined);
  t.ok(bytes.equals(bundle), 'the bundle, whole');
  await t.rejects(client(['http://127.0.0.1:1/']).check(),
    /^http:\/\/127\.0\.0\.1:1\/metadata\/2\.root\.json: ECONNREFUSED$/,
    'every mirror down: the first one\'s failure, named');
});

t.test('a tampered bundle is refused and its last chunk never handed on', async (t) => {
  const c = client([url]);
  const view = await c.check();
  lie(Buffer.concat([bundle, Buffer.from('!')]));
  const longer = await drain(c, view);
  t.match(longer.error?.message, /releases\/web-2\.0\.0\.tar: more than its 3000000 bytes/);
  const altered = Buffer.from(bundle);
  altered[altered.length - 1] = 8;
  lie(altered);
  const refused = await drain(c, view);
  t.match(refused.error?.message, /releases\/web-2\.0\.0\.tar: sha256 [0-9a-f]{64}, the targets say [0-9a-f]{64}/);
  t.ok(refused.bytes.length < bundle.length, `the consumer got ${refused.bytes.length} of ${bundle.length} bytes: `
    + 'never the whole');
  lie(bundle.subarray(0, 100));
  t.match((await drain(c, view)).error?.message, /100 bytes, the targets say 3000000/);
  lie(undefined);
});

t.test('a policy that pins another root starts afresh', async (t) => {
  const d = join(dir, 'anchored');
  await client([url], d).check();
  t.ok(existsSync(join(d, 'metadata', 'targets.json')), 'what tuf-js trusted is kept');
  const timestamp = '{"signed": {"_type": "timestamp"}}';
  t.throws(() => new UpdateClient({ dir: d, urls: [url], channel: 'stable', root: timestamp }),
    /the policy's root is not a TUF root metadata file/);
  t.throws(() => new UpdateClient({ dir: d, urls: [url], channel: 'stable', root: 'nope' }),
    /the policy's root is not JSON/);
  const other = JSON.parse(root) as { signed: { expires: string } };
  new UpdateClient({ dir: d, urls: [url], channel: 'stable', root: JSON.stringify(other, null, 1) });
  t.notOk(existsSync(join(d, 'metadata', 'targets.json')), 'another pinned root: what was trusted is dropped');
});
