// The install payload's manifest as the machine reads it: every field checked, each problem named.
import t from 'tap';
import { INSTALL_PAYLOAD_KIND, parseInstallManifest } from './install-manifest.ts';

const good = {
  kind: INSTALL_PAYLOAD_KIND, version: '1.0', commit: 'abc', cmdline: 'console=ttyS0',
  disk: {
    file: 'appliance.raw.gz', compression: 'gzip', size: 1024, sha256: 'a'.repeat(64), compressedSize: 100,
    compressedSha256: 'b'.repeat(64),
  },
  partitions: [],
};

t.test('a good manifest reads back as written', async (t) => {
  t.same(parseInstallManifest(JSON.stringify(good), 'm'), good);
});

t.test('each bad field is named, with where the manifest came from', async (t) => {
  t.match((parseInstallManifest('{', '/dev/sr0:/install/install.json') as Error).message,
    /^\/dev\/sr0:\/install\/install\.json: not JSON/);
  t.match(parseInstallManifest('[]', 'm'), /kind is undefined/);
  const bad = {
    ...good, kind: 'other', version: 3,
    disk: { ...good.disk, file: '../../etc/shadow', size: 1000, sha256: 'xyz', compression: 'zstd' },
    partitions: {},
  };
  const e = parseInstallManifest(JSON.stringify(bad), 'm') as Error;
  for (const want of [/kind is "other"/, /version must be a string/, /disk\.file must be a plain file name/,
    /disk\.compression is "zstd"/, /whole 512-byte sectors/, /disk\.sha256 must be 64 hex digits/,
    /partitions must be a list/]) t.match(e.message, want);
});
