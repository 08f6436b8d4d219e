// The uid book: one uid per extension name for good, kept in a file across instances (boots); a damaged file kept
// aside and said; a book that is not one refused with the reason; a write that fails fails the uid.
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXTENSION_UID_BASE, extensionUids, parseExtensionUids } from './extension-uids.ts';

const dir = mkdtempSync(join(tmpdir(), 'extension-uids-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const noWarning = (m: string) => {
  throw new Error(`unexpected warning: ${m}`);
};

t.test('memory only: in order of appearance, one per name', async (t) => {
  const u = extensionUids(undefined, noWarning);
  t.equal(u.uidOf('web'), EXTENSION_UID_BASE);
  t.equal(u.uidOf('hello'), EXTENSION_UID_BASE + 1);
  t.equal(u.uidOf('web'), EXTENSION_UID_BASE);
  t.equal(u.file, undefined);
});

t.test('kept in a file: the next boot gives each name its uid whatever the order', async (t) => {
  const file = join(dir, 'kept.json');
  const first = extensionUids(file, noWarning);
  t.equal(first.uidOf('web'), 61_000);
  t.equal(first.uidOf('hello'), 61_001);
  t.equal(statSync(file).mode & 0o777, 0o600);
  const next = extensionUids(file, noWarning);
  t.equal(next.uidOf('hello'), 61_001, 'hello first this time: still its own');
  t.equal(next.uidOf('clock'), 61_002, 'a new name: the lowest never given');
  t.equal(next.uidOf('web'), 61_000);
  t.same(JSON.parse(readFileSync(file, 'utf8')), { uids: { web: 61_000, hello: 61_001, clock: 61_002 } });
});

t.test('a damaged file: kept aside, said, a new book begun', async (t) => {
  const file = join(dir, 'damaged.json');
  writeFileSync(file, '{"uids": {"web": 61');
  const warnings: string[] = [];
  const u = extensionUids(file, (m) => warnings.push(m));
  t.match(warnings, [/damaged\.json: not JSON: .*; kept as .*damaged\.json\.damaged, extensions get uids anew/]);
  t.ok(existsSync(`${file}.damaged`), 'what is left of it is evidence');
  t.equal(u.uidOf('hello'), 61_000);
});

t.test('a book that is not one: the reason', async (t) => {
  t.equal(parseExtensionUids('[]'), 'no "uids" object');
  t.equal(parseExtensionUids('{"uids": {"Web": 61000}}'), '"Web" is not an extension\'s name');
  t.equal(parseExtensionUids('{"uids": {"web": 0}}'), 'web: 0 is not an extension uid (61000 to 64999)');
  t.equal(parseExtensionUids('{"uids": {"web": 61000.5}}'), 'web: 61000.5 is not an extension uid (61000 to 64999)');
  t.equal(parseExtensionUids('{"uids": {"web": 61000, "hello": 61000}}'), 'hello: uid 61000 is another extension\'s');
  t.same(parseExtensionUids('{"uids": {"web": 61003}}'), new Map([['web', 61_003]]));
});

t.test('a uid that cannot be written down is not given', async (t) => {
  const u = extensionUids(join(dir, 'no-such-dir', 'uids.json'), noWarning);
  t.throws(() => u.uidOf('web'), /cannot write .*no-such-dir\/uids\.json: ENOENT/);
  t.throws(() => u.uidOf('web'), /ENOENT/, 'not kept in memory either: asked again, tried again');
});
