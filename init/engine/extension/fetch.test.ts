// An extension's image fetched and checked: from a strict HTTP server on loopback that also
// misbehaves on purpose (wrong bytes, cut short, too large, silent, 404) and from a path; kept
// under its hash only when the hash is the declared one, nothing left behind otherwise.
import t from 'tap';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchImage, IMAGE_KEEP_MS, imagePath, sweepPartials, sweepUnusedImages } from './fetch.ts';

const image = Buffer.alloc(300_000, 7);
image.write('hsqs');
const sha = createHash('sha256').update(image).digest('hex');
const other = createHash('sha256').update('other').digest('hex');

const server: Server = createServer((req, res) => {
  if (req.method !== 'GET') {
    res.writeHead(405).end();
    return;
  }
  switch (req.url) {
    case '/good.squashfs':
      res.writeHead(200, { 'content-length': image.length }).end(image);
      return;
    case '/chunked.squashfs':
      res.writeHead(200);
      res.write(image.subarray(0, 1000));
      res.end(image.subarray(1000));
      return;
    case '/wrong.squashfs':
      res.writeHead(200).end(Buffer.alloc(1000, 1));
      return;
    case '/short.squashfs':
      res.writeHead(200, { 'content-length': image.length });
      res.write(image.subarray(0, 5000), () => res.destroy());
      return;
    case '/huge.squashfs':
      res.writeHead(200, { 'content-length': 2 ** 40 });
      res.write('x');
      return;
    case '/endless.squashfs': {
      res.writeHead(200);
      const more = () => {
        if (!res.destroyed && res.write(Buffer.alloc(65536))) setImmediate(more);
      };
      res.on('drain', more);
      more();
      return;
    }
    case '/silent.squashfs':
      res.writeHead(200, { 'content-length': 10 });
      return;
    case '/stalls.squashfs':
      res.writeHead(200, { 'content-length': 10_000 });
      res.write(Buffer.alloc(100));
      return;
    default: res.writeHead(404).end();
  }
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ext-fetch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test('kept under its hash once the hash is the declared one; a second time is the same file', async (t) => {
  const dir = fresh();
  const got = await fetchImage(`${base}/good.squashfs`, sha, dir);
  t.same(got, { path: imagePath(dir, sha), bytes: image.length, reused: false });
  t.same(readFileSync(imagePath(dir, sha)), image);
  t.same(readdirSync(dir), [`${sha}.squashfs`], 'nothing else');
  t.same(await fetchImage(`${base}/nothing-there`, sha, dir), { path: imagePath(dir, sha), bytes: image.length,
    reused: true }, 'kept already: checked, not fetched');
  writeFileSync(imagePath(dir, sha), 'damaged');
  t.same(await fetchImage(`${base}/chunked.squashfs`, sha, dir), { path: imagePath(dir, sha), bytes: image.length,
    reused: false }, 'a damaged one is fetched anew (a body without Content-Length too)');
});

t.test('from a path on the machine', async (t) => {
  const dir = fresh();
  const file = join(fresh(), 'hello.squashfs');
  writeFileSync(file, image);
  t.match(await fetchImage(file, sha, dir), { bytes: image.length, reused: false });
  t.match(await fetchImage('hello.squashfs', other, fresh()), new Error('hello.squashfs: want an http(s) URL or an '
    + 'absolute path on the machine'));
  t.match(((await fetchImage('/no/such/file', other, fresh())) as Error).message, /^\/no\/such\/file: ENOENT/);
  t.equal(((await fetchImage(file, other, fresh())) as Error).message,
    `${file}: its sha256 is not the ${other} declared`, 'the hash of a file on the machine is not said');
  t.equal(((await fetchImage('/dev', other, fresh())) as Error).message, '/dev: not a regular file');
});

t.test('what is refused names the source and why, and leaves nothing behind', async (t) => {
  const cases: [string, string, RegExp, { maxBytes?: number; idleMs?: number }?][] = [
    ['/wrong.squashfs', sha, new RegExp(`: its sha256 is [0-9a-f]{64}, not the ${sha} declared$`)],
    ['/short.squashfs', sha, /short\.squashfs: aborted$/],
    ['/huge.squashfs', sha, /: 1099511627776 bytes, more than the 1073741824 an extension may have$/],
    ['/endless.squashfs', sha, /: more than the 1000000 bytes an extension may have$/, { maxBytes: 1_000_000 }],
    ['/silent.squashfs', sha, /: nothing received for 0\.3 s$/, { idleMs: 300 }],
    ['/stalls.squashfs', sha, /: nothing received for 0\.3 s$/, { idleMs: 300 }],
    ['/missing.squashfs', sha, /missing\.squashfs: HTTP 404 Not Found$/],
  ];
  for (const [path, hash, why, o] of cases) {
    const dir = fresh();
    const got = await fetchImage(`${base}${path}`, hash, dir, o);
    t.ok(got instanceof Error, path);
    t.match((got as Error).message, new RegExp(`^${base.replace(/[.:/]/g, '\\$&')}${path}`), `${path}: names it`);
    t.match((got as Error).message, why, `${path}: says why`);
    t.same(readdirSync(dir), [], `${path}: nothing left`);
  }
  t.match(await fetchImage(`${base}/good.squashfs`, 'ABC', fresh()), new Error('sha256 "ABC": want 64 lowercase hex '
    + 'digits'));
});

t.test('a fetch SIGKILLed half way leaves only a .partial, which the next start sweeps; then the image is whole',
  async (t) => {
    const dir = fresh();
    // Another process fetches from a server that stalls after 100 bytes of 10,000; it is killed mid-fetch.
    const code = `import { fetchImage } from ${JSON.stringify(new URL('./fetch.ts', import.meta.url).href)};
      await fetchImage(${JSON.stringify(`${base}/stalls.squashfs`)}, ${JSON.stringify(sha)}, ${JSON.stringify(dir)});`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: 'ignore' });
    const partial = await new Promise<string>((resolve) => {
      const look = setInterval(() => {
        const p = readdirSync(dir).find((n) => n.endsWith('.partial'));
        if (p && statSync(join(dir, p)).size > 0) {
          clearInterval(look);
          resolve(p);
        }
      }, 20);
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    t.same(readdirSync(dir), [partial], 'only the half-written temporary file, never the image\'s name');
    t.same(sweepPartials(dir), [partial], 'swept at the next start');
    t.same(readdirSync(dir), []);
    t.match(await fetchImage(`${base}/good.squashfs`, sha, dir), { bytes: image.length, reused: false });
    t.same(readdirSync(dir), [`${sha}.squashfs`]);
    t.same(sweepPartials(join(dir, 'absent')), [], 'no directory yet: nothing to sweep');
  });

t.test('kept images unused for a day go; one fetched again is used again, so it stays; one in use stays', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fetch-sweep-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const image = (body: string) => {
    const sha = createHash('sha256').update(body).digest('hex');
    const source = join(dir, `${sha}.src`);
    writeFileSync(source, body);
    return { sha, source };
  };
  const [old, reused, running] = [image('old'), image('reused'), image('running')];
  for (const i of [old, reused, running]) {
    t.notOk(await fetchImage(i.source, i.sha, join(dir, 'kept')) instanceof Error);
  }
  const dayAgo = new Date(Date.now() - IMAGE_KEEP_MS - 60_000);
  for (const i of [old, reused, running]) utimesSync(imagePath(join(dir, 'kept'), i.sha), dayAgo, dayAgo);
  const again = await fetchImage(reused.source, reused.sha, join(dir, 'kept'));
  t.match(again, { reused: true }, 'found kept, and used now');
  t.same(sweepUnusedImages(join(dir, 'kept'), new Set([running.sha])), [`${old.sha}.squashfs`]);
  t.same(readdirSync(join(dir, 'kept')).sort(), [`${reused.sha}.squashfs`, `${running.sha}.squashfs`].sort());
  t.same(sweepUnusedImages(join(dir, 'absent'), new Set()), [], 'no directory yet: nothing to sweep');
});
