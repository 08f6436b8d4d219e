// raw: the appliance's payload goes into slot A beside its kernel, and the ESP is sized for two slots of it
// and EPHEMERAL for staging an upgrade of it (the real GRUB tools, the real FAT writer, read back with mtools).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeGpt, growGpt, SECTOR, usableRange } from '../../machinery/disk/gpt.ts';
import { buildRawDisk } from './raw.ts';

t.test('slot A holds the payload; the ESP has room for it twice', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'raw-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'vmlinuz'), Buffer.alloc(1 << 20, 1));
  writeFileSync(join(dir, 'initramfs'), Buffer.alloc(2 << 20, 2));
  const payload = join(dir, 'payload');
  mkdirSync(payload);
  writeFileSync(join(payload, 'appliance.json'), '{"name":"kiosk"}\n');
  writeFileSync(join(payload, 'extension-web.squashfs'), Buffer.alloc(40 << 20, 3));
  const build = (payloadDir?: string) => buildRawDisk({
    out: join(dir, 'disk.raw'), kernel: join(dir, 'vmlinuz'), initramfs: join(dir, 'initramfs'),
    cmdline: 'console=ttyS0', seed: 's', epoch: 0, release: { version: '1.0.0', commit: 'c' },
    workDir: mkdtempSync(join(dir, 'work-')), ...(payloadDir ? { payloadDir } : {}),
  });
  const espMiB = (d: ReturnType<typeof build>) => {
    const p = d.gpt.partitions[1]!;
    return (p.lastLba - p.firstLba + 1) * SECTOR / (1 << 20);
  };
  const plain = build();
  t.equal(espMiB(plain), 64, 'no payload: the least FAT32 takes');
  const disk = build(payload);
  t.equal(espMiB(disk), 96, 'two slots of 43 MiB and 8 MiB for the loaders, rounded up to 8 MiB');
  const ephemeral = disk.gpt.partitions[3]!;
  t.ok((ephemeral.lastLba - ephemeral.firstLba + 1) * SECTOR >= (43 + 32) << 20,
    'EPHEMERAL can stage an upgrade of the same size');
  const esp = `${disk.file}@@${disk.gpt.partitions[1]!.firstLba * SECTOR}`;
  t.equal(execFileSync('mtype', ['-i', esp, '::/A/appliance.json'], { encoding: 'utf8' }), '{"name":"kiosk"}\n');
  const listing = execFileSync('mdir', ['-i', esp, '-b', '::/A'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  t.same(listing.map((l) => l.replace('::/A/', '')).sort(),
    ['appliance.json', 'extension-web.squashfs', 'initramfs.cpio.zst', 'slot.env', 'vmlinuz']);
});

t.test('with a disk form: SYSTEM-A holds its image, slot A its initramfs, and EPHEMERAL stays last', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'raw-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'vmlinuz'), Buffer.alloc(1 << 20, 1));
  writeFileSync(join(dir, 'initramfs'), Buffer.alloc(30 << 20, 2)); // as large as a self-contained one
  writeFileSync(join(dir, 'initramfs-disk'), 'the disk form\'s initramfs\n');
  const image = Buffer.alloc(11 << 20, 4);
  image.write('hsqs', 0);
  writeFileSync(join(dir, 'system.squashfs'), image);
  // Larger than the self-contained initramfs (it is not, a third smaller): EPHEMERAL's minimum follows the larger.
  writeFileSync(join(dir, 'system.squashfs.zst'), Buffer.alloc(40 << 20, 5));
  const options = {
    out: join(dir, 'disk.raw'), kernel: join(dir, 'vmlinuz'), initramfs: join(dir, 'initramfs'),
    cmdline: 'console=ttyS0', seed: 's', epoch: 0, release: { version: '1.0.0', commit: 'c' },
    workDir: mkdtempSync(join(dir, 'work-')),
    diskForm: {
      image: join(dir, 'system.squashfs'), initramfs: join(dir, 'initramfs-disk'),
      compressedImage: join(dir, 'system.squashfs.zst'),
    },
  };
  const disk = buildRawDisk(options);
  const { partitions } = disk.gpt;
  t.same(partitions.map((p) => p.name), ['BIOS', 'EFI', 'STATE', 'EPHEMERAL', 'SYSTEM-A', 'SYSTEM-B'],
    'EPHEMERAL keeps its number (4), the SYSTEM partitions come after it in the table');
  const byPlace = [...partitions].sort((a, b) => a.firstLba - b.firstLba).map((p) => p.name);
  t.same(byPlace, ['BIOS', 'EFI', 'STATE', 'SYSTEM-A', 'SYSTEM-B', 'EPHEMERAL'], 'on the disk EPHEMERAL is last');
  const mib = (name: string) => {
    const p = partitions.find((x) => x.name === name)!;
    return (p.lastLba - p.firstLba + 1) * SECTOR / (1 << 20);
  };
  t.equal(mib('SYSTEM-A'), 32, '11 MiB and half again, rounded up to 16 MiB');
  t.equal(mib('SYSTEM-B'), 32);
  t.equal(mib('EFI'), 72, 'the ESP keeps room for two self-contained slots: 2 x (1 + 30 MiB) + 8, to 8 MiB');
  // BIOS 1 + EFI 72 + STATE 16 + SYSTEM 2 x 32 + EPHEMERAL (42 + 32) + 1 + the GPT's 1.
  t.throws(() => buildRawDisk({ ...options, out: join(dir, 'small.raw'), sizeMiB: 228 }),
    /needs at least 229 MiB/, 'EPHEMERAL can stage a disk-form upgrade: its kernel, initramfs and image, 32 MiB more');
  const raw = readFileSync(disk.file);
  const sectors = disk.sizeBytes / SECTOR + 2048;
  const grown = growGpt(decodeGpt(raw.subarray(0, 34 * SECTOR), disk.sizeBytes / SECTOR), sectors, 'EPHEMERAL');
  t.equal(grown.partitions[3]!.lastLba, usableRange(sectors).last, 'first boot can grow it to the new end');
  const places = (ps: typeof partitions) => ps.filter((p) => p.name !== 'EPHEMERAL')
    .map((p) => [p.name, p.firstLba, p.lastLba]);
  t.same(places(grown.partitions), places(partitions), 'and nothing else moves');
  const a = partitions.find((x) => x.name === 'SYSTEM-A')!;
  t.ok(raw.subarray(a.firstLba * SECTOR, a.firstLba * SECTOR + image.length).equals(image), 'SYSTEM-A holds the image');
  const b = partitions.find((x) => x.name === 'SYSTEM-B')!;
  t.ok(raw.subarray(b.firstLba * SECTOR, (b.lastLba + 1) * SECTOR).every((x) => x === 0), 'SYSTEM-B is empty');
  const esp = `${disk.file}@@${partitions[1]!.firstLba * SECTOR}`;
  t.equal(execFileSync('mtype', ['-i', esp, '::/A/initramfs.cpio.zst'], { encoding: 'utf8' }),
    'the disk form\'s initramfs\n', 'slot A boots the disk form');
  t.doesNotThrow(() => execFileSync('sfdisk', ['--verify', disk.file], { stdio: 'pipe' }), 'sfdisk finds it sound');
});
