// The machine's side of `appliance push` on a real state and real files: an image in chunks, resumed where the
// machine stands, checked against its hash and kept; the ExtensionOverride it declares; refusals before anything is
// kept (an extension not declared, a signature required or wrong, another hash); the overrides kept across boots.
import t, { type Test } from 'tap';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newResource } from '../../../cosi/resource/resource.ts';
import { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { Logger } from '../../../machinery/log.ts';
import {
  CONFIG_NS, EXTENSION_OVERRIDE_TYPE, EXTENSION_POLICY_TYPE, EXTENSION_TYPE,
} from '../../../proto/gen/resource-types.ts';
import {
  ExtensionPushes, readPersistedOverrides, writePersistedOverrides, type PushChunk,
} from './extension-push.ts';
import { pushSigningText } from '../../../machinery/model/push-signature.ts';
import { imagePath } from './fetch.ts';

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => quiet };
const image = Buffer.alloc(2_500_000, 'x');
image.write('an image', 0);
const sha = createHash('sha256').update(image).digest('hex');
const trusted = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');

async function setUp(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'extension-push-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const state = new MemoryState();
  await state.create(newResource({ namespace: CONFIG_NS, type: EXTENSION_TYPE, id: 'web' },
    { source: 'http://x/web.squashfs', sha256: 'a'.repeat(64) }));
  const pushes = new ExtensionPushes({ state, log: quiet, imagesDir: dir, trustedKeys: async () => [trusted.publicKey],
    now: () => new Date('2026-11-28T12:00:00Z') });
  const chunk = (offset: number, length: number, more: Partial<PushChunk> = {}) => pushes.push({
    extension: 'web', sha256: sha, size: image.length, offset, data: image.subarray(offset, offset + length),
    persist: false, signature: Buffer.alloc(0), ...more,
  });
  const override = () => state.findSync({ namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE, id: 'web' })?.spec;
  return { dir, state, pushes, chunk, override };
}

t.test('in chunks, in order or not, resumed where the machine stands; kept by its hash; its override declared',
  async (t) => {
  const m = await setUp(t);
  t.same(await m.chunk(0, 1 << 20), { received: 1 << 20, complete: false });
  await t.rejects(m.chunk(0, 1 << 20), { code: 'failed-precondition',
    message: /offset 0: the machine holds 1048576 bytes of extension web's image; send from there/ });
  // The last chunk comes before the one ahead of it (a client keeps several in flight): it waits its turn.
  const last = m.chunk(2 << 20, 1 << 20);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(m.override(), undefined, 'nothing declared before the last byte');
  t.same(await m.chunk(1 << 20, 1 << 20), { received: 2 << 20, complete: false });
  t.same(await last, { received: image.length, complete: true });
  t.same(readFileSync(imagePath(m.dir, sha)), image, 'kept by its hash, where fetched images are');
  t.same(m.override(), { sha256: sha, bytes: image.length, pushedAt: '2026-11-28T12:00:00.000Z', persist: false,
    signedBy: '' });
  t.same(readdirSync(m.dir).filter((n) => n.endsWith('.partial')), [], 'no partial left');
});

t.test('refused before anything is kept: not declared, too large, another hash', async (t) => {
  const m = await setUp(t);
  await t.rejects(m.chunk(0, 100, { extension: 'db' }),
    { message: /extension db is not declared on this machine \(its config declares web\)/ });
  await t.rejects(m.chunk(0, 100, { size: 2 ** 31 }), { message: /an extension's image is 1 to \d+ bytes/ });
  await t.rejects(m.chunk(5, 100), { message: /the machine holds no push of [0-9a-f]{64} for extension web; send/ });
  const wrong = 'b'.repeat(64);
  await m.chunk(0, 1 << 20, { sha256: wrong });
  await m.chunk(1 << 20, 1 << 20, { sha256: wrong });
  await t.rejects(m.chunk(2 << 20, 1 << 20, { sha256: wrong }),
    { message: new RegExp(`its bytes are sha256 ${sha}, not the ${wrong} said: nothing kept`) });
  t.same(readdirSync(m.dir), [], 'nothing kept');
  t.equal(m.override(), undefined);
});

t.test('an ExtensionPolicy that requires signatures: unsigned and wrongly signed refused, signed taken', async (t) => {
  const m = await setUp(t);
  await m.state.create(newResource({ namespace: CONFIG_NS, type: EXTENSION_POLICY_TYPE, id: 'extensions' },
    { requireSignature: true }));
  await t.rejects(m.chunk(0, 100), { message: /an ExtensionPolicy requires pushed images to be signed/ });
  const signed = (key: typeof trusted, name = 'web') => sign(null, Buffer.from(pushSigningText(name, sha)),
    key.privateKey);
  await t.rejects(m.chunk(0, 100, { signature: signed(other) }),
    { message: /its signature verifies with no key this machine trusts/ });
  await t.rejects(m.chunk(0, 100, { signature: signed(trusted, 'db') }),
    { message: /no key this machine trusts/ }, 'a signature for another extension\'s push is not this one\'s');
  // The service keeps each call to 1 MiB; the pushes themselves take any chunk.
  t.equal((await m.chunk(0, image.length, { signature: signed(trusted), persist: true })).complete, true);
  t.match(m.override(), { persist: true, signedBy: /^sha256:[0-9a-f]{64}$/ });
});

t.test('kept across boots: written down when pushed with persist, read back while its image is there', async (t) => {
  const m = await setUp(t);
  const file = join(m.dir, 'pushed.json');
  const kept = { sha256: sha, bytes: 1, pushedAt: 'then', persist: true, signedBy: '' };
  writePersistedOverrides(file, new Map([['web', kept], ['db', { ...kept, persist: false }]]));
  t.same(JSON.parse(readFileSync(file, 'utf8')), { overrides: { web: kept } }, 'only what was pushed with persist');
  const warned: string[] = [];
  const log = { ...quiet, warn: (s: string) => warned.push(s) };
  t.same([...readPersistedOverrides(file, m.dir, log)], [], 'its image gone: not restored');
  t.match(warned, [/extension web: its pushed image [0-9a-f]{64} is gone/]);
  writeFileSync(imagePath(m.dir, sha), image);
  t.same([...readPersistedOverrides(file, m.dir, quiet)], [['web', kept]]);
  writePersistedOverrides(file, new Map());
  t.same(JSON.parse(readFileSync(file, 'utf8')), { overrides: {} }, 'deleted: gone from the file');
  t.ok(existsSync(file));
});
