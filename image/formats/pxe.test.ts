// The PXE output: the script iPXE runs, and the folder a TFTP or HTTP server serves.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InstallManifest } from '../disk/install-payload.ts';
import { ipxeScript, pxe } from './pxe.ts';

t.test('the script loads the kernel and initramfs beside it with the image\'s command line', async (t) => {
  t.equal(ipxeScript(' console=ttyS0 appliance.platform=metal\n'), [
    '#!ipxe',
    '# The appliance over the network: kernel and initramfs from beside this script.',
    'kernel vmlinuz initrd=initramfs.cpio.zst console=ttyS0 appliance.platform=metal',
    'initrd initramfs.cpio.zst',
    'boot',
    '',
  ].join('\n'));
  t.match(ipxeScript(''), /^kernel vmlinuz initrd=initramfs\.cpio\.zst$/m, 'no trailing space when there is none');
});

t.test('the folder: the three files and the install payload, with fixed times', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pxe-'));
  writeFileSync(join(dir, 'k'), 'kernel');
  writeFileSync(join(dir, 'i'), 'initramfs');
  mkdirSync(join(dir, 'payload'));
  writeFileSync(join(dir, 'payload', 'install.json'), '{}');
  writeFileSync(join(dir, 'payload', 'appliance.raw.gz'), 'disk');
  const files = await pxe.build({
    inputs: { kernel: join(dir, 'k'), initramfs: join(dir, 'i'), cmdline: 'console=ttyS0' }, outDir: join(dir, 'out'),
    workDir: dir, seed: 's', epoch: 86400, progress: () => {},
    raw: () => { throw new Error('PXE needs no disk of its own'); },
    release: { version: '1', commit: 'c' },
    signingKey: () => { throw new Error('PXE signs nothing'); },
    liveInitramfs: async () => join(dir, 'i'),
    installPayload: async () => ({
      files: ['install.json', 'appliance.raw.gz'].map((name) => ({ name, path: join(dir, 'payload', name) })),
      manifest: {} as InstallManifest,
    }),
  });
  t.same(files.map((f) => f.slice(dir.length)), ['/out/pxe/boot.ipxe', '/out/pxe/vmlinuz',
    '/out/pxe/initramfs.cpio.zst', '/out/pxe/install/install.json', '/out/pxe/install/appliance.raw.gz']);
  t.equal(readFileSync(files[4]!, 'utf8'), 'disk');
  t.equal(readFileSync(files[1]!, 'utf8'), 'kernel');
  t.match(readFileSync(files[0]!, 'utf8'), /^kernel .* console=ttyS0 appliance\.live$/m,
    'a live system: it leaves the disks it may install to alone');
  t.ok(files.every((f) => statSync(f).mtimeMs === 86400_000), 'every mtime is the epoch');
});
