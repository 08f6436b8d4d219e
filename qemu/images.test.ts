// Disk images (npm run image), built here from the built kernel and initramfs: the GPT read back
// by sfdisk, the ESP by mtools; identical inputs give identical bytes; the raw disk boots under
// SeaBIOS and the qcow2 under OVMF, through GRUB, to a machine whose API answers and which keeps
// its config on the disk's STATE; the hybrid ISO boots as a CD and as a USB stick under both
// firmwares and carries the raw disk as its install payload, and a machine booted from it installs
// itself to a disk through the API, which then boots alone with the live machine's config.
// (The clouds' disks, boot counting, PXE and a growing disk: qemu/images-cloud.test.ts.)
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, zstdDecompressSync } from 'node:zlib';
import { decodeGrubEnv } from '../machinery/disk/grubenv.ts';
import { PARTITION_TYPE, SECTOR } from '../machinery/disk/gpt.ts';
import { verifyUpgradeBundle } from '../machinery/disk/upgrade-bundle.ts';
import { bootWithApi, LIVE_INSTALL_MIB, type CliResult } from './api-vm.ts';
import { buildTestImages, partitionTable } from './image-builds.ts';
import { runProgram } from '../scripts/lib/run-program.ts';


const { a, dir, build, first, fileOf } = await buildTestImages('images');
const rawFile = fileOf('raw');
const qcow2File = fileOf('qcow2');

t.test('the raw disk: GPT as sfdisk reads it, the ESP holding the loaders and slot A', async (t) => {
  const table = partitionTable(rawFile);
  t.equal(table.label, 'gpt');
  t.same(table.partitions.map((p) => [p.name, p.type]), [
    ['BIOS', PARTITION_TYPE.biosBoot], ['EFI', PARTITION_TYPE.esp],
    ['STATE', PARTITION_TYPE.linuxData], ['EPHEMERAL', PARTITION_TYPE.linuxData],
    ['SYSTEM-A', PARTITION_TYPE.linuxData], ['SYSTEM-B', PARTITION_TYPE.linuxData],
  ]);
  const [, , state, ephemeral, systemA, systemB] = table.partitions;
  t.ok(state!.start < systemA!.start && systemA!.start < systemB!.start && systemB!.start < ephemeral!.start,
    'on the disk the SYSTEM partitions lie between STATE and EPHEMERAL, which can grow to the disk\'s end');
  const image = readFileSync(a.disk.image);
  const fd = openSync(rawFile, 'r');
  const held = Buffer.alloc(image.length);
  readSync(fd, held, 0, held.length, systemA!.start * SECTOR);
  closeSync(fd);
  t.ok(held.equals(image), 'SYSTEM-A holds the disk form\'s system image');
  t.ok(table.partitions.every((p) => p.start % 2048 === 0), 'every partition 1 MiB aligned');
  t.match(execFileSync('sfdisk', ['--verify', rawFile], { encoding: 'utf8' }), /No errors detected/);
  const esp = `${rawFile}@@${table.partitions[1]!.start * SECTOR}`;
  const ls = (path: string) => execFileSync('mdir', ['-b', '-i', esp, path], { encoding: 'utf8' });
  t.match(ls('::/EFI/BOOT'), /BOOTX64\.EFI/i);
  t.match(ls('::/A'), /vmlinuz[\s\S]*initramfs\.cpio\.zst|initramfs\.cpio\.zst[\s\S]*vmlinuz/);
  t.ok(execFileSync('mtype', ['-i', esp, '::/A/initramfs.cpio.zst']).equals(readFileSync(a.disk.initramfs)),
    'slot A boots the disk form');
  const env = execFileSync('mtype', ['-i', esp, '::/boot/grub/grubenv']);
  t.equal(env.length, 1024);
  t.same([...decodeGrubEnv(env)], [['default_slot', 'A'], ['good_slots', 'A']]);
  t.match(execFileSync('mtype', ['-i', esp, '::/A/slot.env'], { encoding: 'latin1' }),
    /^# GRUB Environment Block\ncmdline=console=ttyS0[^\n]*\nversion=0\.0\.0-test\ncommit=test\n/,
    'slot A\'s own command line');
  t.match(execFileSync('mtype', ['-i', esp, '::/boot/grub/grub.cfg'], { encoding: 'utf8' }), /tries_left/);
});

t.test('identical inputs give identical images; another seed another disk', async (t) => {
  const again = await build('again');
  for (const x of first) {
    t.equal(again.find((y) => y.file === x.file)?.sha256, x.sha256, `${x.file}: same sha256`);
  }
  const other = await build('other', 'another-seed');
  t.not(other.find((y) => y.format === 'raw')!.sha256, first.find((y) => y.format === 'raw')!.sha256);
});

t.test('the GCE archive: one sparse member, disk.raw, a whole number of GiB', async (t) => {
  const gce = join(dir, 'first', first.find((x) => x.format === 'gce')!.file);
  const list = execFileSync('tar', ['-tvzf', gce], { encoding: 'utf8' }).trim().split('\n');
  t.equal(list.length, 1);
  const [, , size, , , name] = list[0]!.split(/\s+/);
  t.equal(name, 'disk.raw');
  t.equal(Number(size) % (1 << 30), 0, `${size} bytes`);
});

// OVMF keeps more of the memory than SeaBIOS: at 256 MiB the 90 MB initramfs no longer unpacks
// (the boot-speed issue's smaller initramfs is the cure), so UEFI boots get 320 MiB.
for (const [what, image, format, firmware, memoryMiB] of [
  ['raw under SeaBIOS (legacy BIOS)', rawFile, 'raw', 'seabios', 256],
  ['qcow2 under OVMF (UEFI)', qcow2File, 'qcow2', 'ovmf', 320],
] as const) {
  t.test(`${what}: GRUB boots slot A to a machine that answers and keeps its config on STATE`, async (t) => {
    const disk = join(dir, `boot-${firmware}.${format}`);
    execFileSync('cp', ['--sparse=always', image, disk]);
    const { vm, run, poll } = await bootWithApi(
      { bootFrom: 'disk', firmware, memoryMiB, disks: [{ file: disk, format }] }, 'dhcp',
    );
    t.teardown(() => vm.kill());
    t.match(vm.console(), /appliance: booting slot A/);
    t.equal((await run(['get', 'versions'])).code, 0, 'the API answers');
    t.match((await run(['get', 'kernelcmdline', '-o', 'yaml'])).out, /appliance\.slot=A/);
    t.match((await poll(['get', 'configstatus', 'machine', '-o', 'yaml'], /persistedTo: \/\S+/)).out,
      /persistedTo: \/\S+machine-config\.yaml/, 'the config is persisted on the disk\'s STATE');
  });
}

const isoFile = join(dir, 'first', first.find((x) => x.format === 'iso')!.file);

t.test('the ISO: El Torito entries for BIOS and UEFI, a hybrid MBR, and the install payload that is the raw disk',
  async (t) => {
    const report = execFileSync('xorriso', ['-indev', isoFile, '-report_el_torito', 'plain'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    t.match(report, /El Torito boot img :\s+1\s+BIOS\s+y\s+none/, 'a BIOS no-emulation entry');
    t.match(report, /El Torito boot img :\s+2\s+UEFI\s+y\s+none/, 'a UEFI entry');
    const mbr = readFileSync(isoFile).subarray(0, 512);
    t.equal(mbr.readUInt16LE(510), 0xaa55, 'boot code and a (protective) MBR: the stick boots as a disk');
    const table = partitionTable(isoFile);
    t.equal(table.label, 'gpt');
    t.ok(table.partitions.some((p) => p.type === PARTITION_TYPE.esp), 'with an EFI system partition in its GPT');
    const extract = (path: string) => {
      const to = join(dir, `iso-${path.replace(/\W/g, '_')}`);
      execFileSync('xorriso', ['-osirrox', 'on', '-indev', isoFile, '-extract', path, to], { stdio: 'pipe' });
      return to;
    };
    const manifest = JSON.parse(readFileSync(extract('/install/install.json'), 'utf8')) as {
      disk: { sha256: string; size: number; compressedSha256: string }; cmdline: string;
    };
    const rawSha = first.find((x) => x.format === 'raw')!.sha256;
    t.equal(manifest.disk.sha256, rawSha, 'the payload is this build\'s raw disk');
    const disk = gunzipSync(readFileSync(extract('/install/appliance.raw.gz')));
    t.equal(disk.length, manifest.disk.size);
    t.equal(createHash('sha256').update(disk).digest('hex'), rawSha, 'and decompresses to it');
    t.equal(manifest.cmdline, a.cmdline);
  });

t.test('the upgrade bundles: tars of manifest, signature, kernel, initramfs and the disk form that verify with the key '
  + 'written beside them, and with no other', async (t) => {
  const file = (format: string) => join(dir, 'first', first.find((x) => x.file.endsWith('.tar') && x.format === format)!
    .file);
  const bundle = file('upgrade');
  const pub = join(dir, 'first', first.find((x) => x.file.endsWith('.pub'))!.file);
  t.same(execFileSync('tar', ['-tf', bundle], { encoding: 'utf8' }).trim().split('\n'),
    ['manifest.json', 'manifest.sig', 'vmlinuz', 'initramfs.cpio.zst', 'initramfs-disk.cpio.zst',
      'system.squashfs.zst'], 'tar reads it, in streaming order');
  const { manifest, parts } = verifyUpgradeBundle(readFileSync(bundle), createPublicKey(readFileSync(pub)));
  t.match(manifest, { version: '0.0.0-test', commit: 'test', cmdline: a.cmdline });
  t.same(parts.get('vmlinuz'), readFileSync(a.kernel));
  t.same(parts.get('initramfs.cpio.zst'), readFileSync(a.initrd));
  t.same(parts.get('initramfs-disk.cpio.zst'), readFileSync(a.disk.initramfs));
  t.ok(zstdDecompressSync(parts.get('system.squashfs.zst')!).equals(readFileSync(a.disk.image)),
    'the disk form\'s image, zstd\'d');
  const old = verifyUpgradeBundle(readFileSync(file('upgrade-self-contained')), createPublicKey(readFileSync(pub)));
  t.same([...old.parts.keys()], ['vmlinuz', 'initramfs.cpio.zst'], 'the self-contained bundle: what older builds take');
  t.throws(() => verifyUpgradeBundle(readFileSync(bundle), createPublicKey(generateKeyPairSync('ed25519').privateKey)),
    /manifest\.sig: the signature does not verify with key sha256:\w+ \(the manifest names sha256:\w+\)/);
});

// The ISO as a CD-ROM and as a USB stick, under both firmwares: GRUB boots the live system from it.
for (const [medium, firmware, memoryMiB] of [
  ['cdrom', 'seabios', 256], ['cdrom', 'ovmf', 320], ['usb', 'seabios', 256], ['usb', 'ovmf', 320],
] as const) {
  t.test(`the ISO as ${medium === 'cdrom' ? 'a CD-ROM' : 'a USB stick'} under ${firmware}: boots to a machine `
    + 'that answers', async (t) => {
    const { vm, run } = await bootWithApi(
      { bootFrom: 'disk', firmware, memoryMiB, disks: [{ file: isoFile, interface: medium, readonly: true }] }, 'dhcp',
    );
    t.teardown(() => vm.kill());
    t.match(vm.console(), /appliance: booting the ISO/);
    t.equal((await run(['get', 'versions'])).code, 0, 'the API answers');
  });
}

// Installing from the ISO (issue 12): the live system leaves the disks alone; requests that name no disk, another
// machine's disk or a mounted one are refused with the reason and nothing written; the install writes the disk,
// reads it back, puts the machine config on its STATE and records this machine; installing again to that disk needs
// no wipe and reboots when asked; the disk then boots alone, under the other firmware, with the same config.
t.test('install from the ISO: refusals touch nothing; the installed disk boots alone with the live machine\'s config',
  async (t) => {
    const target = join(dir, 'install-target.raw');
    writeFileSync(target, '');
    truncateSync(target, 2 ** 30);
    const other = join(dir, 'install-other.qcow2'); // another machine's disk: the image, with its STATE
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', rawFile, '-F', 'raw', other]);
    const uuid = '5eed0001-0000-4000-8000-00000000cafe';
    const live = await bootWithApi({
      bootFrom: 'disk', firmware: 'seabios', memoryMiB: LIVE_INSTALL_MIB, extraArgs: ['-uuid', uuid],
      disks: [{ file: isoFile, interface: 'cdrom' }, { file: target, serial: 'target-disk' },
        { file: other, format: 'qcow2', serial: 'other-disk' }],
    }, 'dhcp');
    t.teardown(() => live.vm.kill());
    const { run, poll } = live;
    t.match(live.vm.console(), /state: a live system \(appliance\.live\) leaves disks alone/);
    t.notMatch(live.vm.console(), /ephemeral: \/dev\/vdb4 mounted/, 'the other disk\'s EPHEMERAL is not /var');
    const install = (args: string[]) => runProgram(live.cosictl, ['--config', live.cosictlConfig, 'install', ...args],
      { timeoutMs: 240_000 });
    t.equal((await run(['apply', '-f', '-'], 'metadata: {type: motd, id: installed}\nspec: {text: From the ISO}\n'
      + '---\nmetadata: {type: mountspec, id: other}\n'
      + 'spec: {source: LABEL=EPHEMERAL, target: /mnt/other, options: [ro]}\n')).code, 0);
    t.match((await poll(['get', 'mountspecstatus', '/mnt/other', '-o', 'yaml'], /state: applied/)).out,
      /device: \/dev\/vd/);

    const nothing = await install(['--serial', 'nope']);
    t.equal(nothing.code, 1, nothing.err);
    t.match(nothing.err, /no disk matches serial "nope"; the disks: \/dev\/vd\w 1\.00 GiB serial "target-disk"/);
    t.notMatch(nothing.err, /sr0/, 'the medium is no candidate');
    const mounted = await install(['--serial', 'other-disk', '--wipe']);
    t.match(mounted.err, /refused: \/dev\/vd\w has mounted filesystems \(\/dev\/vd\w4 on \/mnt\/other\)/);
    t.equal((await run(['delete', 'mountspec', 'other'])).code, 0);
    // The status goes first, then the unmount: until it is done the disk is refused as mounted.
    let tries = 0;
    let foreign = await install(['--serial', 'other-disk', '--id', 'foreign-0']);
    while (++tries < 20 && /mounted filesystems/.test(foreign.err)) {
      await new Promise((r) => setTimeout(r, 500));
      foreign = await install(['--serial', 'other-disk', '--id', `foreign-${tries}`]);
    }
    t.equal(foreign.code, 1);
    t.match(foreign.err,
      /holds the STATE of another machine on \/dev\/vd\w3 \(no install record: made by a disk image/);
    const foreignStatus = (await run(['get', 'installstatus', `foreign-${tries - 1}`, '-o', 'yaml'])).out;
    t.match(foreignStatus, /phase: failed/);
    t.match(foreignStatus, /diskTouched: false/);

    const first = await install(['--serial', 'target-disk', '--id', 'first']);
    t.equal(first.code, 0, first.err);
    t.match(first.out, /^installed 0\.0\.0-test on \/dev\/vd\w: \d+ resources \(from \S+\) on \/dev\/vd\w3\n$/);
    // The whole disk image is written: its size follows the image's (its ESP holds two slots of the payload).
    const written = `${(statSync(rawFile).size / 1e6).toFixed(1).replace('.', '\\.')} MB`;
    t.match(first.err, new RegExp(`writing /dev/vd\\w: [\\d.]+ of ${written} \\(100%\\)[\\s\\S]*verifying`
      + '[\\s\\S]*configuring'));
    const status = (await run(['get', 'installstatus', 'first', '-o', 'yaml'])).out;
    t.match(status, /phase: done/);
    t.match(status, /source: \/dev\/sr0/, 'the payload came from the CD');
    const at = (k: string) => Date.parse(new RegExp(`${k}: "?([^"\n]+)`).exec(status)?.[1] ?? '');
    t.comment(`install: ${((at('finishedAt') - at('startedAt')) / 1000).toFixed(1)} s from request to done (TCG)`);
    const again = await install(['--serial', 'target-disk', '--reboot', '--id', 'again']);
    t.equal(again.code, 0, `this machine's own install needs no wipe: ${again.err}`);
    const exit = await Promise.race([live.vm.exited,
      new Promise<'running'>((r) => setTimeout(() => r('running'), 60_000))]);
    t.not(exit, 'running', 'asked to reboot, it did (QEMU runs with -no-reboot)');
    t.match(live.vm.console(), /install "again" done: booting \/dev\/vd\w/);
    t.equal(execFileSync('qemu-img', ['compare', '-q', '-U', other, rawFile], { stdio: 'pipe' }).length, 0,
      'the refused disk is the image it was');

    const { vm, run: runDisk, poll: pollDisk } = await bootWithApi({
      bootFrom: 'disk', firmware: 'ovmf', memoryMiB: 320, disks: [{ file: target, format: 'raw' }],
    }, 'dhcp', { secrets: 'none' });
    t.teardown(() => vm.kill());
    t.match(vm.console(), /state: \/dev\/vda3 mounted/);
    // The API answers before the config read from STATE is applied: polled, as EPHEMERAL's state below.
    t.match((await pollDisk(['get', 'motd', 'installed', '-o', 'yaml'], /text: From the ISO/, 60_000)).out,
      /text: From the ISO/, 'the live machine\'s config, CA included (this client is trusted), came along');
    t.match((await runDisk(['get', 'configstatus', 'machine', '-o', 'yaml'])).out, /source: state/);
    t.match((await pollDisk(['get', 'ephemeral', 'ephemeral', '-o', 'yaml'], /state: applied/, 60_000)).out,
      /grew: partition and filesystem/, 'EPHEMERAL grown to the 1 GiB disk');
  });
