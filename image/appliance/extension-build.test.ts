// Extension images built from a directory, from an OCI layout umoci made, and from a prebuilt squashfs; read back
// with unsquashfs (the real tools). The same inputs give the same bytes; each refusal names its reason and leaves
// nothing behind in the output folder.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { buildExtension, ExtensionRefused, MANIFEST_LABEL } from './extension-build.ts';
import type { DefinedExtension } from './defined-extension.ts';

const scratch = mkdtempSync(join(tmpdir(), 'extension-build-test-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const progress: string[] = [];
const opts = (outDir: string) => ({ outDir, version: '1.0.0', progress: (m: string) => progress.push(m) });
/** The image's listing (path, then the manifest in it). */
const listing = (image: string) => run('unsquashfs', '-lls', '-d', '', image).toString();
const manifestIn = (image: string) => YAML.parse(run('unsquashfs', '-cat', image, 'manifest.yaml').toString()) as
  Record<string, unknown>;

function project(): string {
  const dir = mkdtempSync(join(scratch, 'dir-'));
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin/hello'), '#!/bin/hello\n', { mode: 0o755 });
  writeFileSync(join(dir, 'secret'), 'nobody reads me', { mode: 0o600 });
  symlinkSync('bin/hello', join(dir, 'hello'));
  return dir;
}
const dirExtension = (dir: string, fields: Record<string, unknown> = {}): DefinedExtension => ({
  name: 'hello', source: { dir }, fields: { name: 'hello', executable: '/bin/hello', args: ['--loud'], ...fields },
});

t.test('from a directory: its root, the definition\'s fields as its manifest, the mount points made', async (t) => {
  const dir = project();
  const out = join(scratch, 'out-a');
  const a = await buildExtension(dirExtension(dir), opts(out));
  t.equal(a.built, true);
  t.match(a.sha256, /^[0-9a-f]{64}$/);
  const files = listing(a.path);
  for (const p of ['/bin/hello', '/hello -> bin/hello', '/manifest.yaml', '/proc', '/dev', '/tmp', '/run']) {
    t.match(files, p, `the image holds ${p}`);
  }
  t.match(files, /-rwxr-xr-x root\/root\s+\d+ 1970-01-01 00:00 \/bin\/hello/, 'root\'s, its time zero, its mode kept');
  t.same(manifestIn(a.path), { name: 'hello', version: '1.0.0', executable: '/bin/hello', args: ['--loud'] },
    'the manifest: the definition\'s fields, the appliance\'s version');
  t.same(a.manifest.ready, { kind: 'plugin' });
  t.ok(a.notes.some((n) => n === 'made the mount points /proc, /dev, /tmp, /run'), 'the mount points it made said');
  t.ok(a.notes.some((n) => /1 file\(s\) its program cannot read .*: \/secret$/.test(n)), 'an unreadable file said');

  const again = await buildExtension(dirExtension(dir), opts(out));
  t.equal(again.built, false, 'nothing changed: not built again');
  t.equal(again.sha256, a.sha256);
  const elsewhere = await buildExtension(dirExtension(dir), opts(join(scratch, 'out-b')));
  t.equal(elsewhere.built, true);
  t.equal(elsewhere.sha256, a.sha256, 'built again elsewhere: the same bytes');

  writeFileSync(join(dir, 'bin/hello'), '#!/bin/hello v2\n', { mode: 0o755 });
  const changed = await buildExtension(dirExtension(dir), opts(out));
  t.equal(changed.built, true, 'a file changed: built again');
  t.not(changed.sha256, a.sha256);
  const fields = await buildExtension(dirExtension(dir, { ready: 'http:8080/health' }), opts(out));
  t.equal(fields.built, true, 'a field changed: built again');
  t.same(fields.manifest.ready, { kind: 'http', port: 8080, path: '/health' });
  mkdirSync(join(dir, 'srv'));
  symlinkSync('/srv', join(dir, 'state'));
  const volumes = await buildExtension(dirExtension(dir, {
    volumes: [{ name: 'data', path: '/var/lib/hello/data' }, { name: 'state', path: '/state/db' }],
  }), opts(out));
  const made = listing(volumes.path);
  t.match(made, / \/var\/lib\/hello\/data\n/, 'each volume\'s mount point made');
  t.match(made, / \/srv\/db\n/, 'through the root\'s own links, as the program will see it');
  t.ok(volumes.notes.some((n) => n.endsWith('/var/lib/hello/data, /state/db')), 'and said');
});

t.test('a directory refused: its own manifest, no such program, a file where a mount point goes', async (t) => {
  const out = join(scratch, 'out-refused');
  const cases: [string, (dir: string) => DefinedExtension, RegExp][] = [
    ['its own manifest', (dir) => {
      writeFileSync(join(dir, 'manifest.yaml'), 'name: x\n');
      return dirExtension(dir);
    }, /holds \/manifest\.yaml: the definition's fields are the manifest of a dir: extension/],
    ['no program', (dir) => dirExtension(dir, { executable: '/bin/nothing' }),
      /executable \/bin\/nothing: no executable file in its root/],
    ['a program that is not executable', (dir) => dirExtension(dir, { executable: '/secret' }),
      /executable \/secret: no executable file in its root/],
    ['no working directory', (dir) => dirExtension(dir, { workingDir: '/srv' }), /workingDir \/srv: no directory/],
    ['a file at /tmp', (dir) => {
      writeFileSync(join(dir, 'tmp'), '');
      return dirExtension(dir);
    }, /\/tmp in its root is no directory: the launcher mounts on it/],
    ['a file where a volume goes', (dir) => dirExtension(dir, { volumes: [{ name: 'd', path: '/secret/d' }] }),
      /\/secret\/d: \/secret is no directory/],
    ['a volume through a link out of the root', (dir) => {
      symlinkSync('../../etc', join(dir, 'out'));
      return dirExtension(dir, { volumes: [{ name: 'd', path: '/out/x/d' }] });
    }, /\/out\/x\/d: \/out\/x leads nowhere|\/out\/x\/d: \/out leads nowhere/],
  ];
  for (const [what, make, reason] of cases) {
    const err = await buildExtension(make(project()), opts(out)).catch((e: Error) => e);
    t.ok(err instanceof ExtensionRefused, what);
    t.match((err as Error).message, reason, what);
  }
  t.same(existsSync(out) ? readdirSync(out) : [], [], 'nothing written in the output folder');
});

/** An OCI layout umoci made: a program found through PATH, a working directory, a port, a label. */
function ociLayout(label?: string, entrypoint = 'webd'): string {
  const layout = join(mkdtempSync(join(scratch, 'layout-')), 'oci');
  run('umoci', 'init', '--layout', layout);
  run('umoci', 'new', '--image', `${layout}:v1`);
  const bundle = join(mkdtempSync(join(scratch, 'bundle-')), 'b');
  run('umoci', 'unpack', '--image', `${layout}:v1`, bundle);
  const root = join(bundle, 'rootfs');
  mkdirSync(join(root, 'usr/sbin'), { recursive: true });
  mkdirSync(join(root, 'srv/www'), { recursive: true });
  writeFileSync(join(root, 'usr/sbin/webd'), '#!/usr/sbin/webd\n', { mode: 0o755 });
  writeFileSync(join(root, 'srv/www/index.html'), 'hi\n');
  symlinkSync('usr/sbin', join(root, 'sbin'));
  run('umoci', 'repack', '--image', `${layout}:v1`, bundle);
  run('umoci', 'config', '--image', `${layout}:v1`, '--config.entrypoint', entrypoint, '--config.cmd', '-f',
    '--config.cmd', '/etc/webd.conf', '--config.env', 'PATH=/sbin:/bin', '--config.env', 'MODE=prod',
    '--config.workingdir', '/srv/www', '--config.exposedports', '8080/tcp',
    ...(label ? ['--config.label', `${MANIFEST_LABEL}=${label}`] : []));
  return layout;
}

t.test('from an OCI layout: its root and run config; the label and the definition complete it', async (t) => {
  const out = join(scratch, 'out-oci');
  const layout = ociLayout('{memory: 32MiB, outputs: [Pages.web.example.com], env: {MODE: label}}');
  const b = await buildExtension({ name: 'web', source: { oci: layout }, fields: { name: 'web', cpu: '50%' } },
    opts(out));
  t.same(manifestIn(b.path), {
    name: 'web', version: '1.0.0', executable: '/sbin/webd', args: ['-f', '/etc/webd.conf'],
    env: { PATH: '/sbin:/bin', MODE: 'label' }, workingDir: '/srv/www', ready: 'tcp:8080', memory: '32MiB',
    outputs: ['Pages.web.example.com'], cpu: '50%',
  }, 'entrypoint found through the image\'s PATH; the exposed port its readiness; the label\'s and the definition\'s '
    + 'fields added');
  t.match(listing(b.path), '/srv/www/index.html');
  const plain = await buildExtension({ name: 'web', source: { oci: ociLayout() },
    fields: { name: 'web', ready: 'started', executable: '/usr/sbin/webd', args: [] } }, opts(join(scratch, 'o2')));
  t.same(plain.manifest.ready, { kind: 'started' }, 'the definition\'s ready: wins');
  t.same([plain.manifest.executable, plain.manifest.args], ['/usr/sbin/webd', []], 'and its program');
  const noPath = await buildExtension({ name: 'web', source: { oci: ociLayout(undefined, 'httpd') },
    fields: { name: 'web' } }, opts(join(scratch, 'o3'))).catch((e: Error) => e);
  t.match(noPath, { message: /the image's entrypoint "httpd" is in none of its PATH \(\/sbin:\/bin\)/ },
    'the image\'s PATH is where its program is looked for');
  const badLabel = await buildExtension({ name: 'web', source: { oci: ociLayout('[a, list]') },
    fields: { name: 'web' } }, opts(join(scratch, 'o4'))).catch((e: Error) => e);
  t.match(badLabel, { message: new RegExp(`the image's label ${MANIFEST_LABEL}: want a mapping`) });
});

t.test('a prebuilt squashfs: taken as it is when its manifest names it; refused otherwise', async (t) => {
  const dir = project();
  const first = await buildExtension(dirExtension(dir), opts(join(scratch, 'pre')));
  const out = join(scratch, 'out-pre');
  const taken = await buildExtension({ name: 'hello', source: { squashfs: first.path }, fields: { name: 'hello' } },
    opts(out));
  t.equal(taken.sha256, first.sha256, 'the same bytes');
  t.equal(taken.manifest.executable, '/bin/hello');
  const other = await buildExtension({ name: 'other', source: { squashfs: first.path }, fields: { name: 'other' } },
    opts(out)).catch((e: Error) => e);
  t.match(other, { message: /its manifest names it "hello", the definition "other"/ });
  const notImage = join(scratch, 'not.squashfs');
  writeFileSync(notImage, 'not an image');
  const bad = await buildExtension({ name: 'x', source: { squashfs: notImage }, fields: { name: 'x' } }, opts(out))
    .catch((e: Error) => e);
  t.match(bad, { message: /no \/manifest\.yaml read from it/ });
  t.same(readdirSync(out).sort(), ['hello.key', 'hello.manifest.yaml', 'hello.squashfs'], 'nothing of the refused');
});
