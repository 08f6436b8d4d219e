// ExtensionTypeBook.learn: which failed fetches of an image are tried again when a user (no patience) waits,
// against a real HTTP server on loopback that resets connections or cuts a download short on purpose, so the
// errors classified are the ones node's HTTP client really gives.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtensionTypeBook, type RealMachine } from './types.ts';
import { fetchImage, RefusedImage } from './fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'extension-types-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const SHA = 'e'.repeat(64);
/** Requests seen per path. */
const seen = new Map<string, number>();
const server: Server = createServer((req, res) => {
  const n = (seen.get(req.url!) ?? 0) + 1;
  seen.set(req.url!, n);
  const [, how, times] = /^\/(reset|short)-(\d+|always)\//.exec(req.url!) ?? [];
  if (how && (times === 'always' || n <= Number(times))) {
    if (how === 'reset') req.socket.destroy();
    else res.writeHead(200, { 'content-length': 1000 }).write(Buffer.alloc(10), () => res.destroy());
    return;
  }
  // Then bytes whose hash is not the declared one: an answer no further try mends.
  res.writeHead(200).end(Buffer.alloc(100, 1));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise((r) => server.close(r)));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** A machine that fetches for real into `dir`, counting its fetches; nothing here gets as far as mounting. */
function machine(): RealMachine & { fetches: number } {
  const m = {
    fetches: 0, imagesDir: dir, mountsDir: dir,
    mount() { throw new Error('not mounted in this test'); },
    unmount() {},
    prepareGroup: () => '',
    removeGroup: async () => {},
    fetch: (source: string, sha256: string, into: string) => {
      m.fetches++;
      return fetchImage(source, sha256, into);
    },
  };
  return m;
}
const learn = (m: RealMachine, source: string) =>
  new ExtensionTypeBook(m).learn('x', { source, sha256: SHA, insecure: false, ca: '' });

t.test('a reset connection is tried again, and the next answer counts', async (t) => {
  const m = machine();
  const got = await learn(m, `${base}/reset-1/x.squashfs`);
  t.equal(m.fetches, 2);
  t.ok(got instanceof RefusedImage, 'the second answer: the wrong bytes');
  t.match(got, { message: /its sha256 is \w+, not the e+ declared/ });
});

t.test('resets again and again: tried three times in all, then the reset is the answer', async (t) => {
  const m = machine();
  const got = await learn(m, `${base}/reset-always/x.squashfs`);
  t.equal(m.fetches, 3);
  t.match(got, { message: /socket hang up|ECONNRESET/ });
});

t.test('a download cut short counts as a reset', async (t) => {
  const m = machine();
  const got = await learn(m, `${base}/short-1/x.squashfs`);
  t.equal(m.fetches, 2);
  t.match(got, { message: /its sha256 is/ });
});

t.test('a refused connection is not tried again for a user', async (t) => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const m = machine();
  t.match(await learn(m, `http://127.0.0.1:${port}/x.squashfs`), { message: /ECONNREFUSED/ });
  t.equal(m.fetches, 1);
});
