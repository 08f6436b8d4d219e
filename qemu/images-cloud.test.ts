// The clouds' disks, boot counting, PXE and a growing disk, from images built here as
// qemu/images.test.ts builds them: the AWS disk boots from NVMe (its VMDK converts back to the
// same bytes), the GCE disk from virtio-scsi and the raw disk from a USB stick, stage0 reading the system image
// from each; a tried slot
// that never comes up is left for slot A under both firmwares; the PXE folder boots through BIOS
// and EFI iPXE from QEMU's TFTP, and the machine it boots installs itself over HTTP; on a larger
// disk the first boot grows EPHEMERAL (/var) to its end, and a second boot finds what the first
// wrote there.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeGrubEnv, encodeGrubEnv } from '../machinery/disk/grubenv.ts';
import { SECTOR } from '../machinery/disk/gpt.ts';
import { BOOT_TRIES } from '../image/disk/raw.ts';
import { bootWithApi, LIVE_INSTALL_MIB, type CliResult } from './api-vm.ts';
import { buildTestImages, partitionTable } from './image-builds.ts';
import { SEED_ADDR } from './config-seeds.ts';
import { startServer } from '../plugins/platform/testing/metadata-servers.ts';
import { runProgram } from '../scripts/lib/run-program.ts';


const { a, dir, first, fileOf } = await buildTestImages('images-cloud');
const rawFile = fileOf('raw');

// The clouds' disks, as their hypervisors attach them: EC2 Nitro's NVMe (UEFI, as register-image's
// uefi-preferred boots it), the VMDK the same disk once qemu-img converts it back (SeaBIOS), and
// GCE's disk.raw on virtio-scsi; and the raw disk on a USB stick. Their drivers are built in: stage0 finds the system
// image on SYSTEM-A (the disk form) before any module could be loaded, and PID 1 then STATE and EPHEMERAL on the same
// disk.
t.test('the AWS VMDK is the raw disk: qemu-img converts it back to the same bytes', async (t) => {
  const vmdk = join(dir, 'first', first.find((x) => x.file.endsWith('.vmdk'))!.file);
  t.match(execFileSync('qemu-img', ['info', vmdk], { encoding: 'utf8' }), /create type: streamOptimized/);
  execFileSync('qemu-img', ['convert', '-f', 'vmdk', '-O', 'raw', vmdk, join(dir, 'from-vmdk.raw')]);
  t.equal(createHash('sha256').update(readFileSync(join(dir, 'from-vmdk.raw'))).digest('hex'),
    first.find((x) => x.format === 'raw')!.sha256);
});

for (const [what, prepare, disk, firmware, device] of [
  ['AWS raw on NVMe under OVMF', () => rawFile, 'nvme', 'ovmf', 'nvme0n1'],
  ['AWS VMDK, converted back, on NVMe under SeaBIOS', () => join(dir, 'from-vmdk.raw'), 'nvme', 'seabios', 'nvme0n1'],
  ['GCE disk.raw on virtio-scsi under OVMF', () => {
    execFileSync('tar', ['-xzf', join(dir, 'first', first.find((x) => x.format === 'gce')!.file), '-C', dir]);
    return join(dir, 'disk.raw');
  }, 'scsi', 'ovmf', 'sda'],
  // Not a cloud's: the raw disk written to a USB stick (or a machine installed onto a USB disk).
  ['the raw disk on a USB stick (xHCI) under SeaBIOS', () => rawFile, 'usb', 'seabios', 'sda'],
] as const) {
  t.test(`${what}: stage0 reads the system image from ${device}, PID 1 mounts STATE and EPHEMERAL from it, and `
    + 'the API answers', async (t) => {
      const file = join(dir, `cloud-${disk}-${firmware}.raw`);
      execFileSync('cp', ['--sparse=always', prepare(), file]);
      const { vm, run, poll } = await bootWithApi({
        bootFrom: 'disk', firmware, memoryMiB: firmware === 'ovmf' ? 320 : 256,
        disks: [{ file, format: 'raw', interface: disk }],
      }, 'dhcp');
      t.teardown(() => vm.kill());
      t.match(vm.console(), new RegExp(`stage0: the system image is on /dev/${device}p?5\\b`), 'SYSTEM-A on that disk');
      t.match(vm.console(), new RegExp(`state: /dev/${device}p?3 mounted`), 'STATE found on the cloud disk');
      t.match(vm.console(), new RegExp(`ephemeral: /dev/${device}p?4 mounted on /var`), 'and EPHEMERAL');
      // The API answered once already (bootWithApi); the second wave of plugins starting in 320 MiB on a loaded
      // host can stall a call past its 10 s, which is not what this checks: polled, and why it failed is said.
      const versions = await poll(['get', 'versions'], /\sVersion\s/, 60_000);
      t.equal(versions.code, 0, `the API answers ${versions.err.trim()}`);
      t.match((await poll(['get', 'configstatus', 'machine', '-o', 'yaml'], /persistedTo: \/\S+/)).out,
        /persistedTo: \/\S+machine-config\.yaml/, 'the config is persisted on it');
    });
}

// Boot counting, as the upgrade work relies on it: slot B is being tried (try_slot=B, BOOT_TRIES
// left) and never comes up (its initramfs is garbage, so the kernel panics and reboots). GRUB
// counts each try in grubenv before the kernel starts; when none are left it boots slot A again
// and leaves tried_slot=B for the system to report.
for (const [firmware, memoryMiB] of [['seabios', 256], ['ovmf', 320]] as const) {
  t.test(`${firmware}: a tried slot that never comes up is booted ${BOOT_TRIES} times, then GRUB falls back to A`,
    async (t) => {
      const disk = join(dir, `fallback-${firmware}.raw`);
      execFileSync('cp', ['--sparse=always', rawFile, disk]);
      const table = partitionTable(disk);
      const esp = `${disk}@@${table.partitions[1]!.start * SECTOR}`;
      const put = (to: string, content: Buffer) => {
        const file = join(dir, `put-${firmware}`);
        writeFileSync(file, content);
        execFileSync('mcopy', ['-o', '-i', esp, file, to]);
      };
      put('::/B/vmlinuz', readFileSync(a.kernel));
      put('::/B/initramfs.cpio.zst', Buffer.from('not an initramfs'));
      put('::/boot/grub/grubenv', encodeGrubEnv({ default_slot: 'A', try_slot: 'B', tries_left: String(BOOT_TRIES) }));
      const { vm, poll } = await bootWithApi(
        { bootFrom: 'disk', firmware, memoryMiB, noReboot: false, disks: [{ file: disk, format: 'raw' }] }, 'dhcp',
      );
      t.teardown(() => vm.kill());
      const slots = [...vm.console().matchAll(/appliance: booting slot ([AB])/g)].map((m) => m[1]);
      t.same(slots, [...Array(BOOT_TRIES).fill('B'), 'A'], `slots booted: ${slots.join(' ')}`);
      // Polled as the cloud cases above: under load a call can outlast its deadline while the plugins start.
      const cmdline = await poll(['get', 'kernelcmdline', '-o', 'yaml'], /appliance\.slot=/, 60_000);
      t.match(cmdline.out, /appliance\.slot=A/, `the machine runs A ${cmdline.err.trim()}`);
      t.ok((await vm.powerdown(60_000)).clean, 'powered off cleanly');
      const env = decodeGrubEnv(execFileSync('mtype', ['-i', esp, '::/boot/grub/grubenv']));
      t.same(Object.fromEntries(env), { default_slot: 'A', try_slot: '', tries_left: '0', tried_slot: 'B' },
        'grubenv: the try is over, and says which slot failed');
    });
}

t.test('PXE: the folder is listed in the manifest, with the install payload', async (t) => {
  t.same(first.filter((x) => x.format === 'pxe').map((x) => x.file),
    ['pxe/boot.ipxe', 'pxe/vmlinuz', 'pxe/initramfs.cpio.zst', 'pxe/install/install.json',
      'pxe/install/appliance.raw.gz']);
});

// Under SeaBIOS the NIC's option ROM is BIOS iPXE; under OVMF its EFI iPXE, which starts the kernel
// through its EFI stub (the script's initrd= names the initramfs for it).
// Under SeaBIOS the live machine then installs itself from the install folder over HTTP (issue 12): in
// LIVE_INSTALL_MIB (qemu/api-vm.ts says why it is not 256 today).
for (const [firmware, memoryMiB] of [['seabios', LIVE_INSTALL_MIB], ['ovmf', 320]] as const) {
  t.test(`PXE under ${firmware}: the NIC's iPXE runs the script from QEMU's TFTP server; the machine it boots `
    + `answers${firmware === 'seabios' ? ' and installs itself from the folder over HTTP' : ''}`, async (t) => {
    const folder = join(dir, 'first', 'pxe');
    const target = join(dir, `pxe-target-${firmware}.raw`);
    writeFileSync(target, '');
    truncateSync(target, 2 ** 30);
    const http = await startServer((q, s) => {
      const file = join(folder, decodeURIComponent(q.url ?? '/'));
      if (!file.startsWith(`${folder}/`) || !existsSync(file)) {
        s.statusCode = 404;
        s.end();
        return;
      }
      s.setHeader('content-length', statSync(file).size);
      createReadStream(file).pipe(s);
    });
    t.teardown(() => http.close());
    const { vm, run, cosictl, cosictlConfig } = await bootWithApi({
      bootFrom: 'network', firmware, memoryMiB, tftp: { dir: folder, bootfile: 'boot.ipxe' },
      disks: [{ file: target, serial: 'pxe-target' }], guestfwd: [{ ...SEED_ADDR, hostPort: http.port }],
    }, 'dhcp');
    t.teardown(() => vm.kill());
    // Nothing but the script names initrd= (QEMU is given no kernel): the machine is what iPXE booted.
    const cmdline = await run(['get', 'cmdline', 'current', '-o', 'json']);
    t.equal(cmdline.code, 0, `the API answers: ${cmdline.err}`);
    t.match((JSON.parse(cmdline.out) as { spec: { raw: string } }).spec.raw,
      // EFI iPXE puts the image's name first, as a UEFI loader does.
      new RegExp(`^${firmware === 'ovmf' ? 'vmlinuz ' : ''}initrd=initramfs\\.cpio\\.zst console=ttyS0 `),
      'with the script\'s command line');
    if (firmware !== 'seabios') return;
    const source = `http://${SEED_ADDR.guestAddr}/install/`;
    const installed = await runProgram(cosictl,
      ['--config', cosictlConfig, 'install', '--serial', 'pxe-target', '--source', source], { timeoutMs: 240_000 });
    // The console's end says whether the machine died (OOM, panic) or was only slow to answer.
    t.equal(installed.code, 0, installed.err,
      installed.code ? { console: vm.console().split('\n').slice(-40).join('\n') } : {});
    t.match(http.log, ['GET /install/install.json', 'GET /install/appliance.raw.gz'], 'the folder, over HTTP');
    // Byte for byte the raw disk, but for STATE, where the machine config went.
    const state = partitionTable(rawFile).partitions[2]!;
    const outsideState = (b: Buffer) => Buffer.concat([b.subarray(0, state.start * SECTOR),
      b.subarray((state.start + state.size) * SECTOR, statSync(rawFile).size)]);
    t.ok(outsideState(readFileSync(target)).equals(outsideState(readFileSync(rawFile))),
      'the disk holds the raw image (STATE aside)');
    t.match((await run(['get', 'installstatus', '-o', 'yaml'])).out, new RegExp(`source: ${source}`));
  });
}

t.test('a larger disk: the first boot grows EPHEMERAL to its end and keeps /var on it; the second boot keeps '
  + 'what the first wrote', async (t) => {
  const disk = join(dir, 'grow.raw');
  execFileSync('cp', ['--sparse=always', rawFile, disk]);
  const larger = statSync(rawFile).size + 512 * 2 ** 20;
  truncateSync(disk, larger); // as a cloud gives a larger disk than the image
  const boot = () => bootWithApi({ bootFrom: 'disk', disks: [{ file: disk, format: 'raw' }] }, 'dhcp');
  let { vm, run, poll } = await boot();
  t.teardown(() => vm.kill());
  t.match(vm.console(), /ephemeral: \/dev\/vda4 mounted on \/var/, 'PID 1 mounts it before anything runs');
  const grown = (await poll(['get', 'ephemeral', 'ephemeral', '-o', 'yaml'], /state: applied/, 60_000)).out;
  t.match(grown, /grew: partition and filesystem/);
  const bytes = (field: string, yaml: string) => Number(new RegExp(`${field}: "?(\\d+)`).exec(yaml)?.[1]);
  t.ok(bytes('partitionBytes', grown) > 512 * 2 ** 20, `partition ${bytes('partitionBytes', grown)} bytes`);
  t.ok(bytes('filesystemBytes', grown) > bytes('partitionBytes', grown) - 4096, 'the filesystem fills it');
  t.equal(bytes('diskBytes', grown), larger);
  const table = partitionTable(disk);
  const last = table.partitions.find((p) => p.name === 'EPHEMERAL')!;
  t.equal(last.start + last.size - 1, table.lastlba, 'the GPT on the disk says so too');
  t.equal((await run(['apply', '-f', '-'],
    'metadata: {type: filespec, id: kept}\nspec: {path: /var/lib/kept.txt, content: kept}\n')).code, 0);
  await poll(['get', 'filespecstatus', '/var/lib/kept.txt', '-o', 'yaml'], /state: applied/);
  t.ok((await vm.powerdown(60_000)).clean, 'powered off cleanly');
  ({ vm, run, poll } = await boot());
  t.match((await poll(['get', 'ephemeral', 'ephemeral', '-o', 'yaml'], /state: applied/, 60_000)).out,
    /grew: ""/, 'nothing to grow the second time');
  t.match((await poll(['get', 'filespecstatus', '/var/lib/kept.txt', '-o', 'yaml'], /state: applied/)).out,
    /original: a2VwdA==/, 'the file from the first boot was there before the config wrote it again');
});
