// The upgrader on a real boot partition in a temporary directory, fed as the update poller feeds it (upgradeFrom, a
// bundle read from a file): a version below the running one is refused unless a downgrade is asked for, naming
// both; a higher one is written to the other slot, the loader told to try it, the machine rebooted. A bundle with the
// disk form writes its image (zstd'd by the real tool) to the slot's SYSTEM partition (a file here) on a disk that has
// one, and is taken self-contained on a disk that has none; an image too large for its partition touches nothing.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { createLogger } from '../../machinery/log.ts';
import { GRUBENV_PATH } from '../../machinery/disk/boot-slots.ts';
import { encodeGrubEnv } from '../../machinery/disk/grubenv.ts';
import { encodeUpgradeBundle } from '../../machinery/disk/upgrade-bundle.ts';
import type { UpgradeStatusSpec } from '../../proto/gen/spec-types.ts';
import { CONFIG_NS, RUNTIME_NS, UPGRADE_POLICY_TYPE, UPGRADE_STATUS_TYPE } from '../../proto/gen/resource-types.ts';
import { BootPartition } from './boot-partition.ts';
import { startUpgrader, type SystemDisk } from './upgrader.ts';

const dir = mkdtempSync(join(tmpdir(), 'upgrader-'));
const file = (name: string, data: string | Buffer) => {
  writeFileSync(join(dir, name), data);
  return join(dir, name);
};
const key = generateKeyPairSync('ed25519').privateKey;
const bundle = (version: string) => file(`${version}.tar`, encodeUpgradeBundle({ version, commit: 'c',
  cmdline: 'console=ttyS0', mtime: 0, privateKey: key,
  parts: [{ name: 'vmlinuz', data: Buffer.from(`kernel ${version}`) },
    { name: 'initramfs.cpio.zst', data: Buffer.from(`initramfs ${version}`) }] }));

/** A machine running 2.0.0 from slot A of a boot partition of its own, trusting `key`. */
async function machine(t: Test, systemDisk?: SystemDisk, idleMs?: number) {
  const esp = mkdtempSync(join(dir, 'esp-'));
  mkdirSync(join(esp, 'boot', 'grub'), { recursive: true });
  writeFileSync(join(esp, GRUBENV_PATH), encodeGrubEnv({ default_slot: 'A', good_slots: 'A' }));
  const boot = new BootPartition(esp, 'A');
  boot.clearSlot('A');
  await boot.fillSlot('A', { kernel: file('k', 'kernel'), initramfs: file('i', 'initramfs'), extras: [] },
    { cmdline: 'console=ttyS0', version: '2.0.0', commit: 'a' }, () => {});
  const state = new MemoryState();
  await state.create(newResource({ namespace: CONFIG_NS, type: UPGRADE_POLICY_TYPE, id: 'test' },
    { trustedKeys: [createPublicKey(key).export({ type: 'spki', format: 'pem' })], minVersion: '' }));
  const reboots: string[] = [];
  const upgrader = await startUpgrader({
    state, log: createLogger('test'), owner: 'engine', slotsChanged: async () => {}, ...(idleMs ? { idleMs } : {}),
    machine: { boot, stagingDir: join(esp, 'staging'), reboot: (why) => reboots.push(why),
      ...(systemDisk ? { systemDisk } : {}) },
  });
  t.teardown(() => upgrader.close());
  const statusOf = (id: string) =>
    state.findSync({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id })?.spec as UpgradeStatusSpec | undefined;
  return { boot, upgrader, reboots, statusOf };
}
const spec = { reboot: true, tries: 1, healthTimeoutSeconds: 0, allowDowngrade: false, source: 'test' };

t.test('a version below the running one: refused, naming both, nothing written', async (t) => {
  const { boot, upgrader, reboots, statusOf } = await machine(t);
  t.equal(upgrader.runningVersion(), '2.0.0', 'the running slot\'s version');
  await upgrader.upgradeFrom('down', spec, async () => createReadStream(bundle('1.5.0')));
  t.match(statusOf('down'), { phase: 'failed',
    error: 'version 1.5.0 is below the running 2.0.0: refused (a downgrade is asked for: cosictl upgrade '
      + '--allow-downgrade)' });
  t.equal(boot.slot('B'), undefined, 'slot B untouched');
  t.same(reboots, []);
});

t.test('asked for, the downgrade is written', async (t) => {
  const { boot, upgrader, reboots, statusOf } = await machine(t);
  await upgrader.upgradeFrom('down-asked', { ...spec, allowDowngrade: true },
    async () => createReadStream(bundle('1.5.0')));
  await waitFor(() => statusOf('down-asked')?.phase === 'staged');
  t.equal(boot.slot('B')?.version, '1.5.0');
  t.match(boot.loader(), { trySlot: 'B' });
  t.match(reboots, [/upgrade "down-asked" to 1\.5\.0 in slot B/]);
});

t.test('from a stream, the slot is written only once the stream ended and checked out', async (t) => {
  const { boot, upgrader, reboots, statusOf } = await machine(t);
  const bytes = readFileSync(bundle('2.5.0'));
  // The whole archive, then zero padding, then the source's own refusal (as TUF's hash check at the stream's end).
  async function* refusedAtEnd() {
    yield bytes;
    yield Buffer.alloc(512);
    throw new Error('releases/x.tar: sha256 0000, the targets say 1111');
  }
  await upgrader.upgradeFrom('refused-at-end', spec, async () => refusedAtEnd());
  t.match(statusOf('refused-at-end'), { phase: 'failed', error: 'releases/x.tar: sha256 0000, the targets say 1111',
    bytesWritten: 0 });
  t.equal(boot.slot('B'), undefined, 'slot B untouched');
  t.same(reboots, [], 'no reboot');
  async function* trailing() {
    yield bytes;
    yield Buffer.from('more');
  }
  await upgrader.upgradeFrom('trailing', spec, async () => trailing());
  t.match(statusOf('trailing'), { phase: 'failed', error: /bytes after the end of the bundle's archive/ });
  await upgrader.upgradeFrom('other-version', spec, async () => createReadStream(bundle('2.5.0')),
    { version: '2.6.0' });
  t.match(statusOf('other-version'), { phase: 'failed',
    error: 'the bundle is version 2.5.0; the release it was fetched as is 2.6.0' });
  t.same(reboots, [], 'still no reboot');
});

t.test('an archive end inside the stream is written once, whatever chunks follow', async (t) => {
  const { upgrader, reboots, statusOf } = await machine(t, undefined, 300);
  const bytes = readFileSync(bundle('2.5.0'));
  async function* chunked() {
    // The tar's two zero blocks arrive in their own small chunks, after the archive already ended.
    yield bytes.subarray(0, bytes.length - 512);
    yield bytes.subarray(bytes.length - 512);
    yield Buffer.alloc(512);
    yield Buffer.alloc(512);
  }
  await upgrader.upgradeFrom('chunked', spec, async () => chunked());
  await waitFor(() => statusOf('chunked')?.phase === 'staged');
  await new Promise((r) => setTimeout(r, 100));
  t.equal(reboots.length, 1, 'one reboot');
  const written = statusOf('chunked')!.bytesWritten;
  t.ok(written > 0 && written < 100, `the slot written once (${written} bytes)`);
  await new Promise((r) => setTimeout(r, 600));
  t.equal(statusOf('chunked')?.phase, 'staged', 'and staged it stays: the padding set no idle timer');
});

/** The system's image (a squashfs's magic and random bytes), zstd'd as the build does it. */
const image = Buffer.concat([Buffer.from('hsqs'), randomBytes((3 << 20) - 4)]);
execFileSync('zstd', ['-q', '-f', file('image', image), '-o', join(dir, 'image.zst')]);
const diskBundle = (version: string, parts = ['initramfs-disk.cpio.zst', 'system.squashfs.zst']) => file(
  `${version}-disk.tar`, encodeUpgradeBundle({ version, commit: 'c', cmdline: 'console=ttyS0', mtime: 0,
    privateKey: key,
    parts: [{ name: 'vmlinuz', data: Buffer.from(`kernel ${version}`) },
      { name: 'initramfs.cpio.zst', data: Buffer.from(`initramfs ${version}`) },
      { name: 'initramfs-disk.cpio.zst', data: Buffer.from(`disk initramfs ${version}`) },
      { name: 'system.squashfs.zst', data: readFileSync(join(dir, 'image.zst')) }]
      .filter((p) => !p.name.includes('disk') && !p.name.includes('system') || parts.includes(p.name)) }));
/** SYSTEM-B as a file of `bytes` that held something before. */
const systemB = (name: string, bytes: number) => file(name, Buffer.alloc(bytes, 0xaa));
const systemDisk = (devPath: string | Error): SystemDisk => ({
  partition: (slot) => {
    if (devPath instanceof Error) throw devPath;
    return slot === 'B' ? { devPath, sizeBytes: statSync(devPath).size } : undefined;
  },
  flushBuffers: async () => {},
});

t.test('the disk form: its image to SYSTEM-B, read back; the slot boots it with the initramfs that finds it',
  async (t) => {
    const b = systemB('system-b', 5 << 20);
    const { boot, upgrader, statusOf } = await machine(t, systemDisk(b));
    await upgrader.upgradeFrom('disk', spec, async () => createReadStream(diskBundle('3.0.0')));
    await waitFor(() => statusOf('disk')?.phase === 'staged');
    t.ok(readFileSync(b).subarray(0, image.length).equals(image), 'SYSTEM-B holds the image');
    t.equal(readFileSync(join(boot.slotDir('B'), 'initramfs.cpio.zst'), 'utf8'), 'disk initramfs 3.0.0');
    t.equal(boot.slot('B')?.version, '3.0.0');
    const written = statusOf('disk')!.bytesWritten;
    t.ok(written > image.length, `the image counted as written (${written})`);
  });

t.test('the same bundle on a disk without SYSTEM partitions: self-contained', async (t) => {
  const { boot, upgrader, statusOf } = await machine(t, { partition: () => undefined, flushBuffers: async () => {} });
  await upgrader.upgradeFrom('plain', spec, async () => createReadStream(diskBundle('3.0.0')));
  await waitFor(() => statusOf('plain')?.phase === 'staged');
  t.equal(readFileSync(join(boot.slotDir('B'), 'initramfs.cpio.zst'), 'utf8'), 'initramfs 3.0.0');
  t.ok(statusOf('plain')!.bytesWritten < 100, 'no image written');
});

t.test('an image too large for SYSTEM-B, half a disk form, a disk that cannot be read: refused, nothing touched',
  async (t) => {
    const small = systemB('small', 2 << 20);
    const { boot, upgrader, statusOf, reboots } = await machine(t, systemDisk(small));
    await upgrader.upgradeFrom('big', spec, async () => createReadStream(diskBundle('3.0.0')));
    await waitFor(() => statusOf('big')?.phase === 'failed');
    t.match(statusOf('big')?.error, new RegExp(`writing slot B: the system image \\(3\\.1 MB\\) does not fit SYSTEM-B `
      + `\\(.*small, 2\\.1 MB\\): upgrade with the self-contained bundle`));
    t.ok(readFileSync(small).every((x) => x === 0xaa), 'SYSTEM-B untouched');
    t.equal(boot.record(), undefined, 'no record: the loader and the slots as they were');
    t.same(boot.loader(), { defaultSlot: 'A', triesLeft: 0, good: new Set(['A']) });
    const half = diskBundle('3.0.1', ['system.squashfs.zst']);
    await upgrader.upgradeFrom('half', spec, async () => createReadStream(half));
    t.match(statusOf('half')?.error, /the disk form's system\.squashfs\.zst without its other part/);
    const { upgrader: u2, statusOf: s2 } = await machine(t, systemDisk(new Error('/sys/class/block: EACCES')));
    await u2.upgradeFrom('unknown', spec, async () => createReadStream(diskBundle('3.0.0')));
    t.match(s2('unknown')?.error, 'cannot find SYSTEM-B: /sys/class/block: EACCES');
    t.same(reboots, []);
  });

t.test('a failure once the slot was emptied: the record says why, for the next boot to report; A stays the default',
  async (t) => {
    const notADevice = mkdtempSync(join(dir, 'system-b-')); // opened for writing: EISDIR, after the slot was emptied
    const { boot, upgrader, statusOf, reboots } = await machine(t, {
      partition: () => ({ devPath: notADevice, sizeBytes: 5 << 20 }), flushBuffers: async () => {},
    });
    await upgrader.upgradeFrom('eisdir', spec, async () => createReadStream(diskBundle('3.0.0')));
    await waitFor(() => statusOf('eisdir')?.phase === 'failed');
    t.match(statusOf('eisdir')?.error, /^writing slot B: cannot open .* for writing: EISDIR/);
    t.match(boot.record(), { id: 'eisdir', status: { phase: 'failed', error: /EISDIR/ } },
      'the record: failed, not "writing" (which the next boot would call a power cut)');
    t.match(boot.loader(), { defaultSlot: 'A', triesLeft: 0 }, 'A the default, B not tried');
    t.equal(boot.slot('B'), undefined, 'B empty');
    t.same(reboots, []);
  });

async function waitFor(ok: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
