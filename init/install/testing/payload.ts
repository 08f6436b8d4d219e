// payload: a small install payload for host tests: a disk's bytes, their gzip, and the manifest
// that describes both, as the image build writes it.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { INSTALL_DISK, INSTALL_PAYLOAD_KIND, type InstallManifest } from '../../../machinery/disk/install-manifest.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function testPayload(disk: Buffer): { gz: Buffer; manifest: InstallManifest } {
  const gz = gzipSync(disk);
  return {
    gz,
    manifest: {
      kind: INSTALL_PAYLOAD_KIND, version: '1.2.3', commit: 'abc', cmdline: 'console=ttyS0',
      disk: {
        file: INSTALL_DISK, compression: 'gzip', size: disk.length, sha256: sha(disk),
        compressedSize: gz.length, compressedSha256: sha(gz),
      },
      partitions: [],
    },
  };
}
