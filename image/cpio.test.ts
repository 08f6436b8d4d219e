import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, lstatSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpioError, decodeCpio, encodeCpioBuffer, sortEntries, type CpioEntry } from './cpio.ts';

const tree: CpioEntry[] = [
  { type: 'dir', path: 'dev', mode: 0o755 },
  { type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1 },
  { type: 'file', path: '/init', mode: 0o755, data: Buffer.from('#!hello\n'), mtime: 1700000000 },
  { type: 'dir', path: 'lib', mode: 0o755 },
  { type: 'file', path: 'lib/odd', mode: 0o644, data: Buffer.from('abc') }, // length not a multiple of 4
  { type: 'symlink', path: 'lib/link', target: 'odd' },
  { type: 'file', path: 'empty', mode: 0o600, data: Buffer.alloc(0) },
];

t.test('round trip keeps paths, types, modes, data and device numbers', async (t) => {
  const back = decodeCpio(encodeCpioBuffer(sortEntries(tree)));
  t.same(back.map((e) => e.path), ['dev', 'dev/console', 'empty', 'init', 'lib', 'lib/link', 'lib/odd']);
  const init = back.find((e) => e.path === 'init')!;
  t.equal(init.data.toString(), '#!hello\n');
  t.equal(init.mode, 0o755);
  t.equal(init.mtime, 1700000000);
  const con = back.find((e) => e.path === 'dev/console')!;
  t.equal(con.type, 'chardev');
  t.same([con.rdevMajor, con.rdevMinor], [5, 1]);
  t.equal(back.find((e) => e.path === 'lib/link')!.data.toString(), 'odd');
  t.equal(back.find((e) => e.path === 'lib/odd')!.data.toString(), 'abc');
});

t.test('header layout: magic, 4-byte alignment, trailer', async (t) => {
  const buf = encodeCpioBuffer([{ type: 'file', path: 'a', mode: 0o644, data: Buffer.from('xyz') }]);
  t.equal(buf.toString('ascii', 0, 6), '070701');
  t.equal(buf.length % 4, 0);
  // header 110 + "a\0" = 112 (aligned), data 3 + 1 pad = 116, then the trailer
  t.equal(buf.toString('ascii', 116, 122), '070701');
  t.match(buf.toString('ascii', 116 + 110, 116 + 120), 'TRAILER!!!');
  t.equal(buf.toString('ascii', 6 + 8 * 6, 6 + 8 * 7), '00000003', 'filesize field');
});

t.test('deterministic: same entries, same bytes', async (t) => {
  const a = encodeCpioBuffer(sortEntries(tree));
  const b = encodeCpioBuffer(sortEntries([...tree].reverse()));
  t.ok(a.equals(b));
});

t.test('refuses bad input, naming it', async (t) => {
  t.throws(
    () => encodeCpioBuffer([{ type: 'file', path: 'a/b', mode: 0o644, data: Buffer.alloc(0) }]),
    /"a\/b" comes before its directory "a"/,
  );
  t.throws(
    () => encodeCpioBuffer([{ type: 'dir', path: 'a', mode: 0o755 }, { type: 'dir', path: '/a/', mode: 0o755 }]),
    /duplicate archive path "a"/,
  );
  t.throws(() => encodeCpioBuffer([{ type: 'dir', path: '../etc', mode: 0o755 }]), CpioError);
  t.throws(() => decodeCpio(Buffer.from('070702' + '0'.repeat(200))), /bad magic "070702"/);
  t.throws(() => decodeCpio(encodeCpioBuffer(tree.slice(2, 3)).subarray(0, 115)), /runs past the end|truncated/);
});

t.test('GNU cpio extracts what we write', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cpio-test-'));
  const archive = join(dir, 'a.cpio');
  writeFileSync(archive, encodeCpioBuffer(sortEntries(tree.filter((e) => e.type !== 'chardev'))));
  execFileSync('cpio', ['-idm', '--quiet', '-F', archive], { cwd: join(dir) });
  t.equal(readFileSync(join(dir, 'init'), 'utf8'), '#!hello\n');
  t.equal(lstatSync(join(dir, 'init')).mode & 0o777, 0o755);
  t.equal(readlinkSync(join(dir, 'lib/link')), 'odd');
  t.equal(readFileSync(join(dir, 'lib/odd'), 'utf8'), 'abc');
});

t.test('we read what GNU cpio writes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cpio-test-'));
  writeFileSync(join(dir, 'hello.txt'), 'hello world');
  const out = execFileSync('cpio', ['-o', '-H', 'newc', '--quiet'], { cwd: dir, input: 'hello.txt\n' });
  const entries = decodeCpio(out);
  t.equal(entries.length, 1);
  t.equal(entries[0]!.path, 'hello.txt');
  t.equal(entries[0]!.data.toString(), 'hello world');
});
