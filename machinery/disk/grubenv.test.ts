// grubenv: what we write, grub-editenv (GRUB's own tool) lists; what it writes, we read.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeGrubEnv, encodeGrubEnv, GRUBENV_SIZE } from './grubenv.ts';

const dir = mkdtempSync(join(tmpdir(), 'grubenv-'));
const editenv = (file: string, ...args: string[]) => (
  execFileSync('grub-editenv', [file, ...args], { encoding: 'utf8' })
);

t.test('our block, read by grub-editenv; its block, read by us', async (t) => {
  const ours = join(dir, 'ours');
  writeFileSync(ours, encodeGrubEnv({ default_slot: 'A', try_slot: 'B', tries_left: '3' }));
  t.equal(readFileSync(ours).length, GRUBENV_SIZE);
  t.equal(editenv(ours, 'list'), 'default_slot=A\ntry_slot=B\ntries_left=3\n');
  const theirs = join(dir, 'theirs');
  editenv(theirs, 'create');
  editenv(theirs, 'set', 'tries_left=2', 'odd=a\\b');
  t.same([...decodeGrubEnv(readFileSync(theirs))], [['tries_left', '2'], ['odd', 'a\\b']]);
  editenv(ours, 'set', 'tries_left=2');
  t.equal(decodeGrubEnv(readFileSync(ours)).get('tries_left'), '2', 'an edit in place keeps the rest');
  t.equal(decodeGrubEnv(readFileSync(ours)).get('try_slot'), 'B');
});

t.test('escapes round-trip; bad names, non-ASCII and overflow are refused', async (t) => {
  const v = 'line one\nback\\slash';
  t.equal(decodeGrubEnv(encodeGrubEnv({ v })).get('v'), v);
  t.throws(() => encodeGrubEnv({ 'a-b': 'x' }), /"a-b" is not a variable name/);
  t.throws(() => encodeGrubEnv({ a: 'é' }), /only printable ASCII/);
  t.throws(() => encodeGrubEnv({ a: 'x'.repeat(1000) }), /more than the block's 1024/);
  t.throws(() => decodeGrubEnv(Buffer.alloc(1024)), /no "# GRUB Environment Block" signature/);
  t.throws(() => decodeGrubEnv(Buffer.alloc(12)), /12 bytes/);
});
