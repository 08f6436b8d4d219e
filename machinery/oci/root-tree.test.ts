// The layer rules, one by one, on entries made here (root-tree.ts never touches a filesystem).
import t from 'tap';
import { entryPath, linkStaysInside, RootTree } from './root-tree.ts';
import type { TarEntry, TarHeader } from './tar-read.ts';

const file = (name: string, text = name, mode = 0o644): TarEntry =>
  ({ header: { name, type: 'file', mode }, data: Buffer.from(text) });
const dir = (name: string, mode = 0o755): TarEntry =>
  ({ header: { name, type: 'directory', mode }, data: Buffer.alloc(0) });
const entry = (h: TarHeader): TarEntry => ({ header: h, data: Buffer.alloc(0) });
const paths = (r: RootTree) => [...r.nodes.keys()].filter(Boolean).sort();

t.test('entry names: ./ and trailing slashes go; absolute and .. are refused', async (t) => {
  t.same(entryPath('./usr/bin/'), { path: 'usr/bin' });
  t.same(entryPath('usr//lib/./x'), { path: 'usr/lib/x' });
  t.same(entryPath('./'), { path: '' });
  t.same(entryPath('/etc/passwd'), { problem: 'an absolute path' });
  t.same(entryPath('usr/../../etc'), { problem: 'a .. segment' });
});

t.test('symbolic links: relative ones may climb to the root, not past it; absolute ones name a path inside',
  async (t) => {
  t.ok(linkStaysInside('usr/lib/x', '../../bin/sh'));
  t.notOk(linkStaysInside('usr/lib/x', '../../../etc/shadow'));
  t.notOk(linkStaysInside('x', '..'));
  t.ok(linkStaysInside('etc/alternatives/awk', '/usr/bin/mawk'));
});

t.test('layers in order: parents made, a file replaced, whiteouts and opaque directories', async (t) => {
  const r = new RootTree();
  t.same(r.apply([dir('./etc/'), file('etc/a'), file('etc/b'), file('usr/share/doc/x'), dir('var/lib/'),
    file('var/lib/old'), file('var/lib/keep')]).problems, []);
  t.same(paths(r), ['etc', 'etc/a', 'etc/b', 'usr', 'usr/share', 'usr/share/doc', 'usr/share/doc/x', 'var', 'var/lib',
    'var/lib/keep', 'var/lib/old'], 'the parents an archive leaves out are made');
  const second = r.apply([file('etc/a', 'new'), file('etc/.wh.b'), file('usr/share/.wh.doc'),
    file('var/lib/new'), file('var/lib/.wh..wh..opq')]);
  t.same(second.problems, []);
  t.same(paths(r), ['etc', 'etc/a', 'usr', 'usr/share', 'var', 'var/lib', 'var/lib/new'],
    'b and the doc tree whited out; the opaque directory keeps only what this layer put in it');
  const a = r.nodes.get('etc/a');
  t.equal(a?.type === 'file' && a.data.toString(), 'new', 'the later layer wins');
  t.same(r.apply([entry({ name: 'var/lib', type: 'symlink', linkname: '../srv' })]).problems, []);
  t.same(paths(r).filter((p) => p.startsWith('var/')), ['var/lib'], 'a directory replaced by a link takes its tree');
});

t.test('hard links share the file; a link to nothing is refused and the layer left unapplied', async (t) => {
  const r = new RootTree();
  r.apply([file('bin/busybox', 'BB', 0o755), entry({ name: 'bin/ls', type: 'link', linkname: 'bin/busybox' })]);
  const ls = r.nodes.get('bin/ls');
  t.equal(ls?.type === 'file' && ls.data.toString(), 'BB');
  const before = paths(r);
  const out = r.apply([file('bin/new'), entry({ name: 'bin/cat', type: 'link', linkname: 'bin/nothing' })]);
  t.match(out.problems, [/bin\/cat: a hard link to bin\/nothing, which is not there/]);
  t.same(paths(r), before, 'nothing of the refused layer stays');
});

t.test('refused, each named: absolute, .., device nodes, links out, writing through a link', async (t) => {
  const r = new RootTree();
  r.apply([entry({ name: 'lib', type: 'symlink', linkname: 'usr/lib' })]);
  const out = r.apply([
    file('/etc/passwd'), file('a/../../x'), entry({ name: 'dev/sda', type: 'block-device', devmajor: 8 }),
    entry({ name: 'dev/mem', type: 'character-device', devmajor: 1, devminor: 1 }),
    entry({ name: 'escape', type: 'symlink', linkname: '../../../../etc' }),
    entry({ name: 'h', type: 'link', linkname: '/etc/shadow' }),
  ]);
  t.same(out.problems, [
    '/etc/passwd: an absolute path',
    'a/../../x: a .. segment',
    'dev/sda: a block-device (device nodes and other special files are not taken)',
    'dev/mem: a character-device (device nodes and other special files are not taken)',
    'escape: a symbolic link to ../../../../etc leaves the root',
    'h: a hard link to /etc/shadow: an absolute path',
  ]);
  t.match(r.apply([file('lib/libc.so')]).problems,
    ['lib/libc.so: its directory lib is a symbolic link (a layer may not write through one)']);
});

t.test('setuid and setgid bits are dropped and listed', async (t) => {
  const r = new RootTree();
  const out = r.apply([
    file('usr/bin/su', 'x', 0o4755), file('usr/bin/wall', 'x', 0o2755), file('usr/bin/ok', 'x', 0o755),
  ]);
  t.same(out.droppedSetid, ['usr/bin/su', 'usr/bin/wall']);
  const su = r.nodes.get('usr/bin/su');
  t.equal(su?.type === 'file' && su.mode, 0o755);
});
