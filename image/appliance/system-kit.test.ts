// The system kit: written and opened whole; a part changed, cut short or missing is refused naming it; the
// initramfs made from it trusts the key it is given, and is made again only when that key changes.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { kitInitramfs, openSystemKit, SystemKitError, trustedKeyFile, writeSystemKit } from './system-kit.ts';

const dir = mkdtempSync(join(tmpdir(), 'system-kit-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const paths = {
  vmlinuz: join(dir, 'vmlinuz'), systemImage: join(dir, 'system.squashfs'), stage0: join(dir, 'stage0'),
  kernelConfig: join(dir, 'kernel.config'), kernelFragment: join(dir, 'kernel-fragment.config'),
};
const parts = () => {
  writeFileSync(paths.vmlinuz, 'kernel bytes');
  writeFileSync(paths.systemImage, 'system image bytes');
  writeFileSync(paths.stage0, 'stage0 bytes');
  writeFileSync(paths.kernelConfig, 'CONFIG_FUTEX=y\nCONFIG_DUMMY=m\n');
  writeFileSync(paths.kernelFragment, 'CONFIG_FUTEX=y\n');
};
parts();
const kitOf = () => writeSystemKit(dir, { version: '1.2.3', commit: 'abc', cmdline: 'console=ttyS0\n',
  topLevelDirs: ['usr'], modules: ['vxlan', 'dummy'], paths,
  kernel: { key: 'k1', source: 'linux-source-6.1@1', release: '6.1.1' },
  compression: { compressor: 'zstd', level: 3, blockSize: '32K' } });

t.test('written and opened whole', async (t) => {
  const written = await kitOf();
  const kit = await openSystemKit(dir);
  t.same(written, kit, 'the writer gives the kit as opening it does');
  t.equal(kit.version, '1.2.3');
  t.equal(kit.cmdline, 'console=ttyS0');
  t.same(kit.modules, ['dummy', 'vxlan']);
  t.same(kit.paths, paths);
  t.same(kit.files.stage0, { file: 'stage0', size: 12, sha256: kit.files.stage0.sha256 });
  t.same(kit.kernel, { key: 'k1', source: 'linux-source-6.1@1', release: '6.1.1' }, 'the kernel build it came from');
  t.equal(kit.files.kernelConfig.size, 30, 'the kernel\'s config, checked as the other parts');
});

t.test('a part changed, cut short or missing: refused, naming it', async (t) => {
  await kitOf();
  writeFileSync(paths.vmlinuz, 'kernel BYTES');
  await t.rejects(openSystemKit(dir), /system kit .*: vmlinuz: sha256 [0-9a-f]{64}, the kit says [0-9a-f]{64}/);
  parts();
  truncateSync(paths.systemImage, 3);
  await t.rejects(openSystemKit(dir), /system\.squashfs: 3 bytes, the kit says 18/);
  rmSync(paths.stage0);
  parts();
  rmSync(paths.stage0);
  await t.rejects(openSystemKit(dir), /stage0 \(stage0\) is missing/);
  await t.rejects(openSystemKit(join(dir, 'none')), SystemKitError);
  parts();
});

t.test('its initramfs trusts the key given; made again only when the key changes', async (t) => {
  await kitOf();
  const kit = await openSystemKit(dir);
  const key = { privateKey: generateKeyPairSync('ed25519').privateKey, description: 'a' };
  const output = join(dir, 'initramfs.cpio.zst');
  t.equal(await kitInitramfs(kit, { key, mtime: 0, output, cacheDir: dir }), true, 'made');
  t.equal(await kitInitramfs(kit, { key, mtime: 0, output, cacheDir: dir }), false, 'the same: not made again');
  const archive = execFileSync('zstd', ['-dc', output]);
  const listed = execFileSync('cpio', ['-it', '--quiet'], { input: archive, encoding: 'utf8' }).split('\n');
  const keyFile = trustedKeyFile(key);
  const inside = execFileSync('cpio', ['-i', '--quiet', '--to-stdout', keyFile.path.slice(1)], { input: archive });
  t.same(inside, keyFile.data, `${keyFile.path}: the key's public half`);
  t.ok(listed.includes('init') && listed.includes('system.squashfs'), 'stage0 as /init, the system image');
  const other = { privateKey: generateKeyPairSync('ed25519').privateKey, description: 'b' };
  t.equal(await kitInitramfs(kit, { key: other, mtime: 0, output, cacheDir: dir }), true, 'another key: made again');
});
