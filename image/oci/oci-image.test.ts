// Images made by the field's own tools (umoci builds an OCI layout layer by layer; skopeo turns it into a
// `docker save` archive and into zstd layers), read back; then layouts broken on purpose, each refused with its reason.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import {
  chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { LAYER_MEDIA, MEDIA, OciRefused, readOciImage, unpackImage } from './oci-image.ts';
import { tarOf } from '../../machinery/oci/test-registry.ts';
import { sha256 } from '../hash.ts';

const scratch = mkdtempSync(join(tmpdir(), 'oci-image-test-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });

let unpacks = 0;
/** The image at `input` read and unpacked into a directory of its own (the way both the build and the machine do). */
async function unpacked(input: string) {
  const image = await readOciImage(input);
  const root = join(scratch, `root-${unpacks++}`);
  const { droppedSetid } = await unpackImage(image, root);
  return { image, root, droppedSetid, text: (path: string) => readFileSync(join(root, path), 'utf8') };
}

/** An OCI layout of two layers made by umoci: the second deletes a file (a whiteout) and changes another. */
function umociLayout(): string {
  const layout = join(scratch, 'layout');
  run('umoci', 'init', '--layout', layout);
  run('umoci', 'new', '--image', `${layout}:v1`);
  const b1 = join(scratch, 'bundle1');
  run('umoci', 'unpack', '--image', `${layout}:v1`, b1);
  const root = join(b1, 'rootfs');
  mkdirSync(join(root, 'usr/bin'), { recursive: true });
  mkdirSync(join(root, 'srv/www'), { recursive: true });
  writeFileSync(join(root, 'usr/bin/hello'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
  writeFileSync(join(root, 'usr/bin/su'), 'setuid', { mode: 0o755 });
  chmodSync(join(root, 'usr/bin/su'), 0o4755);
  writeFileSync(join(root, 'srv/www/index.html'), 'version 1\n');
  writeFileSync(join(root, 'srv/www/old.html'), 'old\n');
  symlinkSync('usr/bin', join(root, 'bin'));
  run('umoci', 'repack', '--image', `${layout}:v1`, b1);
  const b2 = join(scratch, 'bundle2');
  run('umoci', 'unpack', '--image', `${layout}:v1`, b2);
  unlinkSync(join(b2, 'rootfs/srv/www/old.html'));
  writeFileSync(join(b2, 'rootfs/srv/www/index.html'), 'version 2\n');
  run('umoci', 'repack', '--image', `${layout}:v1`, b2);
  run('umoci', 'config', '--image', `${layout}:v1`, '--config.entrypoint', '/usr/bin/hello', '--config.cmd', '--loud',
    '--config.env', 'GREETING=hi there', '--config.workingdir', '/srv/www', '--config.exposedports', '8080/tcp',
    '--config.user', '1000:1000', '--config.label', 'org.example.role=web');
  return layout;
}

t.test('umoci\'s layout, its docker save archive and its zstd copy read the same', async (t) => {
  const layout = umociLayout();
  const archive = join(scratch, 'hello.tar');
  run('skopeo', 'copy', '-q', `oci:${layout}:v1`, `docker-archive:${archive}:hello:v1`);
  const zstd = join(scratch, 'zstd');
  run('skopeo', 'copy', '-q', '--dest-compress-format', 'zstd', `oci:${layout}:v1`, `oci:${zstd}:v1`);
  const manifestOf = (dir: string) => {
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    return readFileSync(join(dir, 'blobs/sha256', index.manifests[0]!.digest.slice('sha256:'.length)), 'utf8');
  };
  t.match(manifestOf(zstd), /application\/vnd\.oci\.image\.layer\.v1\.tar\+zstd/, 'skopeo wrote zstd layers');
  for (const [what, input] of [['OCI layout', layout], ['docker save archive', archive], ['zstd layers', zstd]]) {
    const img = await unpacked(input!);
    t.equal(img.text('srv/www/index.html'), 'version 2\n', `${what}: the second layer's page`);
    t.notOk(existsSync(join(img.root, 'srv/www/old.html')), `${what}: the whiteout applied`);
    t.equal(img.text('usr/bin/hello'), '#!/bin/sh\necho hello\n');
    t.equal(lstatSync(join(img.root, 'usr/bin/hello')).mode & 0o7777, 0o755, `${what}: modes as the layers say`);
    t.equal(readlinkSync(join(img.root, 'bin')), 'usr/bin');
    t.same(img.droppedSetid, ['usr/bin/su'], `${what}: the setuid bit dropped and said`);
    t.equal(lstatSync(join(img.root, 'usr/bin/su')).mode & 0o7777, 0o755);
    t.same(img.image.config, {
      entrypoint: ['/usr/bin/hello'], cmd: ['--loud'], env: { GREETING: 'hi there' }, workingDir: '/srv/www',
      exposedPorts: ['8080/tcp'], user: '1000:1000', labels: { 'org.example.role': 'web' },
    }, `${what}: the run settings`);
  }
});

t.test('two tags in one layout: refused, naming them', async (t) => {
  const layout = join(scratch, 'two');
  run('umoci', 'init', '--layout', layout);
  run('umoci', 'new', '--image', `${layout}:a`);
  run('umoci', 'new', '--image', `${layout}:b`);
  await t.rejects(readOciImage(layout), { name: 'OciRefused', message: /2 linux\/amd64 images \(a, b\)/ });
});

// --- layouts written here, to break on purpose


interface LayoutOptions {
  layers: Buffer[];
  layerMedia?: string;
  platform?: { os: string; architecture: string };
  /** The config's diff_ids, when not those of the layers. */
  diffIds?: string[];
  tamper?: (dir: string, digests: { config: string; layers: string[] }) => void;
}

function writeLayout(name: string, o: LayoutOptions): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'blobs/sha256'), { recursive: true });
  writeFileSync(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const blob = (b: Buffer, mediaType: string) => {
    writeFileSync(join(dir, 'blobs/sha256', sha256(b)), b);
    return { mediaType, digest: `sha256:${sha256(b)}`, size: b.length };
  };
  const compressed = o.layers.map((l) => gzipSync(l));
  const config = Buffer.from(JSON.stringify({
    os: o.platform?.os ?? 'linux', architecture: o.platform?.architecture ?? 'amd64',
    rootfs: { type: 'layers', diff_ids: o.diffIds ?? o.layers.map((l) => `sha256:${sha256(l)}`) }, config: {},
  }));
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: MEDIA.ociManifest, config: blob(config, MEDIA.ociConfig),
    layers: compressed.map((l) => blob(l, o.layerMedia ?? 'application/vnd.oci.image.layer.v1.tar+gzip')),
  }));
  const m = blob(manifest, MEDIA.ociManifest);
  writeFileSync(join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{
    ...m, ...(o.platform ? { platform: o.platform } : {}) }] }));
  o.tamper?.(dir, { config: sha256(config), layers: compressed.map((l) => sha256(l)) });
  return dir;
}

const ok = () => tarOf([{ header: { name: 'etc/motd', type: 'file', mode: 0o644 }, data: 'hi\n' }]);

t.test('refused, each with its reason', async (t) => {
  const refused = async (what: string, input: string, re: RegExp) => {
    const e = await unpacked(input).then(() => undefined, (x: unknown) => x);
    t.ok(e instanceof OciRefused, `${what}: refused`);
    t.match((e as OciRefused).message, re, what);
  };
  t.equal((await unpacked(writeLayout('fine', { layers: [await ok()] }))).text('etc/motd'), 'hi\n',
    'the layout these cases break is read when not broken');
  await refused('a layer media type nobody knows', writeLayout('media', { layers: [await ok()],
    layerMedia: 'application/vnd.example.layer.v1.squashfs' }), /layer 0 media type application\/vnd\.example/);
  await refused('only arm64', writeLayout('arm', { layers: [await ok()],
    platform: { os: 'linux', architecture: 'arm64' } }), /no linux\/amd64 image \(present: linux\/arm64\)/);
  await refused('a changed layer', writeLayout('tampered', { layers: [await ok()], tamper: (dir, d) => {
    const f = join(dir, 'blobs/sha256', d.layers[0]!);
    const b = readFileSync(f);
    b.writeUInt8(b.readUInt8(b.length - 1) ^ 1, b.length - 1);
    writeFileSync(f, b);
  } }), /layer 0: blob sha256:[0-9a-f]+ does not match its digest/);
  await refused('a layer that is not the one the config names', writeLayout('diffid', { layers: [await ok()],
    diffIds: [`sha256:${sha256(Buffer.from('another layer'))}`] }),
  /layer 0 \(sha256:[0-9a-f]+\): does not match the config's diff_id/);
  await refused('a missing blob', writeLayout('missing', { layers: [await ok()],
    tamper: (dir, d) => rmSync(join(dir, 'blobs/sha256', d.config)) }), /config: blob sha256:[0-9a-f]+ is missing/);
  await refused('an absolute path and a device node', writeLayout('hostile', { layers: [await tarOf([
    { header: { name: '/etc/shadow', type: 'file', mode: 0o600 }, data: 'x' },
    { header: { name: 'dev/kmsg', type: 'character-device', devmajor: 1, devminor: 11 } },
  ])] }), /\/etc\/shadow: an absolute path; .*dev\/kmsg: a character-device/);
  await refused('a link out of the root', writeLayout('escape', { layers: [await tarOf([
    { header: { name: 'www', type: 'symlink', linkname: '../../../../root' } },
  ])] }), /www: a symbolic link to \.\.\/\.\.\/\.\.\/\.\.\/root leaves the root/);
  await refused('not a layout', scratch, /no oci-layout file/);
  await refused('nothing there', join(scratch, 'nope'), /no such file or directory/);
  t.same(Object.values(LAYER_MEDIA).sort(), ['gzip', 'gzip', 'none', 'zstd']);
});
