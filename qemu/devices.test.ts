// The machines people have, booted for real: QEMU's own defaults (no -nodefaults: an empty CD-ROM drive, a
// floppy, VGA), the pc machine with PIIX IDE, NICs whose drivers are modules (e1000e, e1000, rtl8139), none, two,
// disks on AHCI, IDE, NVMe, virtio-scsi and USB, foreign data on them (an MBR with NTFS, an LVM physical volume), a
// blank 2 TB disk, the system image read from a disk, 1 to 4 vCPUs and 224 MiB. Each reaches ready with no FATAL,
// and with a NIC its API answers; what it cannot use is named in its status. The empty CD-ROM is the real ENOMEDIUM
// (libuv has no name for 123). Cases are combined so that six boots cover the matrix; a table of boot-to-ready
// times closes the file.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi, reportTellingLines, type ApiVm } from './api-vm.ts';
import { IMAGE_PLUGINS } from './api-machine.ts';
import { artifacts } from './artifacts.ts';
import { buildRawImage } from './image-builds.ts';
import { ICOUNT_ARGS, launch, type Disk, type VmOptions } from './launch.ts';
import { milestoneLine, READY_RE } from '../init/boot/ready-line.ts';

const dir = mkdtempSync(join(tmpdir(), 'devices-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
/** Guest time counts instructions (1 ns each): boot figures that do not move with this host's load. */
const ICOUNT = [...ICOUNT_ARGS];

interface Row { name: string; devices: string; ready: string; clock: string; notes: string }
const rows: Row[] = [];
t.teardown(() => {
  const w = [24, 84, 7, 6];
  const line = (r: Row) => `${r.name.padEnd(w[0]!)} ${r.devices.padEnd(w[1]!)} ${r.ready.padStart(w[2]!)} `
    + `${r.clock.padEnd(w[3]!)} ${r.notes}`;
  process.stdout.write(['', '# device matrix: boot to the ready line (guest seconds)',
    line({ name: 'case', devices: 'devices', ready: 'ready', clock: 'clock', notes: 'what it named' }),
    ...rows.map(line), ''].map((l) => `# ${l}`).join('\n') + '\n');
});

const sparse = (name: string, size: string) => {
  const f = join(dir, name);
  execFileSync('truncate', ['-s', size, f]);
  return f;
};
const writeAt = (file: string, offset: number, data: Buffer) => {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, data, 0, data.length, offset);
  } finally {
    closeSync(fd);
  }
};

/** A Windows disk: an MBR whose one partition (type 7) holds an NTFS made by the real mkntfs. */
function ntfsDisk(): string {
  const disk = sparse('windows.raw', '64M');
  execFileSync('sfdisk', ['-q', disk], { input: 'label: dos\nstart=2048, type=7\n' });
  const part = sparse('ntfs.part', `${64 * 1024 - 1024}K`);
  execFileSync('mkntfs', ['-q', '-F', '-Q', '-L', 'WINDOWS', part], { stdio: 'ignore' });
  execFileSync('dd', [`if=${part}`, `of=${disk}`, 'bs=1M', 'seek=1', 'conv=notrunc,sparse'], { stdio: 'ignore' });
  return disk;
}

/** An LVM physical volume's label (LVM2's on-disk format: "LABELONE" in sector 1, type "LVM2 001"). */
function lvmDisk(): string {
  const disk = sparse('lvm.raw', '32M');
  const label = Buffer.alloc(512);
  label.write('LABELONE', 0, 'latin1');
  label.writeBigUInt64LE(1n, 8); // the sector it sits in
  label.writeUInt32LE(32, 20); // offset of the contents
  label.write('LVM2 001', 24, 'latin1');
  writeAt(disk, 512, label);
  return disk;
}

interface Disks { blockDevices: { metadata: { id: string }; spec: Record<string, unknown> }[] }
const blockDevices = async (m: ApiVm, until: RegExp) => (JSON.parse(
  (await m.poll(['get', 'blockdevices', '-o', 'json'], until, 120_000)).out,
) as { items: Disks['blockDevices'] }).items;
const deviceSpec = (all: Disks['blockDevices'], id: string) => all.find((d) => d.metadata.id === id)?.spec;

/** The checks every machine passes: ready, no FATAL, and (with a NIC) the API answering. */
function common(t: Test, console: string) {
  t.notMatch(console, /FATAL/, 'no FATAL on the console');
  t.notMatch(console, /Unknown system error/, 'no error the runtime could not name');
}

async function withApi(
  name: string, devices: string, extra: Partial<VmOptions>, check: (t: Test, m: ApiVm) => Promise<string>,
) {
  await t.test(`${name}: ${devices}`, async (t) => {
    const m = await bootWithApi(extra, 'dhcp');
    t.teardown(() => {
      if (!t.passing()) reportTellingLines(t.name, m.vm);
      m.vm.kill();
    });
    const ready = READY_RE.exec(m.vm.console());
    t.ok(ready, 'the ready line');
    // Settled first: four vCPUs of TCG on a loaded two-core host, while the second wave of plugins starts, left one
    // call unanswered for 10 s (a full run here); the machine is judged on what it shows once running.
    await m.awaitPlugins(IMAGE_PLUGINS);
    const version = await m.run(['get', 'versions']);
    t.equal(version.code, 0, `the API answers through the NIC ${version.err}`);
    const notes = await check(t, m);
    common(t, m.vm.console());
    const clock = extra.extraArgs?.includes('-icount') ? 'icount' : 'tcg';
    rows.push({ name, devices, ready: ready ? `${Number(ready[1]).toFixed(2)}` : '-', clock, notes });
  });
}

// Everything the machines boot on is made before the first boots: tap ends the file's top level (and its
// teardown removes the scratch directory) when no test is pending.
const raw = await buildRawImage(dir, 'devices-test');
const foreignDisks: Disk[] = [
  { file: ntfsDisk(), interface: 'ahci' }, { file: lvmDisk(), interface: 'nvme' },
  { file: sparse('blank.raw', '2T'), interface: 'scsi' }, { file: sparse('stick.raw', '16M'), interface: 'usb' },
];

// In its disk form too (stage0.c, from_disk): the system image on an AHCI disk (as `-hda` puts it, so that QEMU keeps
// its default CD-ROM), which stage0 finds by its superblock past the empty drive (opening it is the real ENOMEDIUM).
// A copy: QEMU's IDE disk cannot be read-only.
const systemDisk = join(dir, 'system-disk.img');
copyFileSync(artifacts().disk.image, systemDisk);
await withApi('q35 defaults, disk form', 'empty AHCI CD-ROM, the system image on an AHCI disk, VGA, e1000e (module)', {
  defaults: true, nics: ['e1000e'], extraArgs: ICOUNT, initrd: artifacts().disk.initramfs,
  disks: [{ file: systemDisk, interface: 'ide' }],
}, async (t, m) => {
  t.match(m.vm.console(), /stage0: the system image is on \/dev\/sda\r?\n/, 'stage0 found the image on the AHCI disk');
  const all = await blockDevices(m, /(?=[\s\S]*"sr0")(?=[\s\S]*"sda")/);
  t.match(deviceSpec(all, 'sr0'), { removable: true, probeError: 'no medium' }, 'the empty drive: ENOMEDIUM, named');
  t.match(deviceSpec(all, 'sda'), { fstype: 'squashfs' }, 'the system image\'s disk, listed as what it holds');
  t.match(m.vm.console(), /drivers: loaded [^\n]*\be1000e \(/, 'the NIC\'s driver by modalias');
  return 'sr0: no medium; image read from sda';
});

// The raw disk on pc's IDE, booted by SeaBIOS and GRUB as `qemu-system-x86_64 -hda` would: STATE is found
// through the PIIX driver, and the default CD-ROM and floppy sit beside it.
await withApi('pc defaults, IDE disk', 'i440fx, raw disk on PIIX IDE, empty IDE CD-ROM, floppy, rtl8139', {
  machine: 'pc', defaults: true, nics: ['rtl8139'], bootFrom: 'disk', disks: [{ file: raw, interface: 'ide' }],
  extraArgs: ICOUNT,
}, async (t, m) => {
  t.match(m.vm.console(), /state: \/dev\/sda3 mounted/, 'STATE found on the IDE disk');
  t.match(m.vm.console(), /drivers: loaded [^\n]*\b8139too \(/, 'the NIC\'s driver by modalias');
  const all = await blockDevices(m, /"sr0"/);
  t.match(deviceSpec(all, 'sr0'), { probeError: 'no medium' }, 'the empty IDE CD-ROM');
  t.match(deviceSpec(all, 'sda3'), { label: 'STATE' });
  const floppy = all.some((d) => /^fd\d/.test(d.metadata.id));
  return `sr0: no medium; ${floppy ? 'fd0 listed' : 'floppy: no driver in this kernel, not listed'}`;
});

await withApi('q35 storage, 2 NICs',
  'AHCI (MBR+NTFS), NVMe (LVM), virtio-scsi (2 TB blank), USB; virtio+e1000e; 4 vCPUs', {
  cpus: 4, nics: ['virtio', 'e1000e'], disks: foreignDisks,
}, async (t, m) => {
  // Three SCSI disks (AHCI, virtio-scsi, USB: their drivers all built in), named in the order they were probed.
  const all = await blockDevices(m, /(?=[\s\S]*"nvme0n1")(?=[\s\S]*"ntfs")(?=[\s\S]*"sdb")(?=[\s\S]*"sdc")/);
  const ntfs = all.find((d) => d.spec.fstype === 'ntfs');
  t.match(ntfs?.spec, { parent: /^sd[abc]$/ }, 'the NTFS partition, named and left alone');
  t.equal(ntfs?.metadata.id, `${ntfs?.spec.parent}1`, 'as its disk\'s first partition');
  t.match(deviceSpec(all, 'nvme0n1'), { fstype: 'LVM2_member' }, 'the LVM physical volume');
  const twoTb = all.find((d) => Number(d.spec.sizeBytes) === 2 * 2 ** 40);
  t.ok(twoTb, `the blank 2 TB disk: ${twoTb?.metadata.id}`);
  t.notOk(twoTb?.spec.fstype, 'holds nothing');
  t.match(m.vm.console(), /state: no filesystem labelled STATE/, 'no STATE among them: the config in memory');
  const links = (await m.poll(['get', 'links'], /eth1/, 60_000)).out;
  t.match(links, /eth0/);
  t.match(links, /eth1/, 'both NICs are links');
  return `${ntfs?.metadata.id} ntfs, nvme0n1 LVM2_member, ${twoTb?.metadata.id} 2 TB blank`;
});

// A dead RTC too: the CMOS clock reads 1970, before every certificate; PID 1 moves the clock to this build's date,
// and the API (whose client certificates start in 2000) answers.
// 224 MiB, the smallest machine booted here: it was 192 MiB with Node 20; Node 24's processes hold 19 MiB more, and at
// 192 MiB the machine paged its programs until the API let a client's connect time out (issue 36's memory levers).
await withApi('pc at 224 MiB, RTC 1970', 'i440fx defaults (IDE CD-ROM, floppy), e1000 (module); 2 vCPUs; 224 MiB', {
  machine: 'pc', defaults: true, nics: ['e1000'], memoryMiB: 224, cpus: 2,
  extraArgs: ['-rtc', 'base=1970-01-01T00:00:00'],
}, async (t, m) => {
  t.match(m.vm.console(), /drivers: loaded [^\n]*\be1000 \(/, 'the NIC\'s driver by modalias');
  t.match(m.vm.console(),
    /clock: it read 1970-01-01T00:\d\d:\d\d\.\d+Z, before this build was made: moved forward to /);
  const time = JSON.parse((await m.poll(['get', 'timestatus', '-o', 'json'], /clockProblem/, 120_000)).out);
  t.match(time.items[0]?.spec, {
    rtcAtBoot: /^1970-01-01T/, floor: /^20\d\d-/,
    clockProblem: /^the RTC read 1970-01-01T00:\d\d:\d\dZ at boot, before /,
  }, 'TimeStatus says where the clock started');
  const all = /"running"(?:[\s\S]*"running"){5}/;
  const plugins = (await m.poll(['get', 'plugins', '-o', 'json'], all, 120_000)).out;
  const kills = [...m.vm.console().matchAll(/Out of memory: Killed process \d+ \(([^)]+)\)/g)].map((x) => x[1]);
  // A plugin the kernel killed is named in its status (how it last ended), never a silent restart.
  if (kills.length) t.match(plugins, /SIGKILL|memory/i, `the OOM kills (${kills.join(', ')}) are in PluginStatus`);
  else t.match(plugins, all, 'all six plugins run in 224 MiB');
  return `clock moved 1970 -> floor; ${kills.length ? `OOM killed: ${kills.join(', ')}` : 'no OOM kill'}`;
});

// The other way: an RTC decades ahead is past every certificate's end. The machine says so on its console, and
// refuses the API's clients with the reason, naming its clock; cosictl prints it and exits 6. (2060, not 2099: given
// base=2099, QEMU's CMOS clock showed the guest 2062-11-25, which says nothing about us.)
await t.test('q35, RTC 2060: the API refuses its clients naming the clock', async (t) => {
  const m = await bootWithApi({ extraArgs: [...ICOUNT, '-rtc', 'base=2060-01-01T00:00:00'] }, 'dhcp',
    { awaitApi: false });
  t.teardown(() => m.vm.kill());
  const ready = READY_RE.exec(m.vm.console());
  t.match(m.vm.console(), new RegExp('clock: the clock reads 2060-01-01T00:00:\\d\\dZ, \\d+ years after this build '
    + 'was made .*: certificates checked against it look expired'));
  const deadline = Date.now() + 120_000;
  let r = await m.run(['get', 'versions']);
  while (r.code === 5 && Date.now() < deadline) {
    await new Promise((x) => setTimeout(x, 500));
    r = await m.run(['get', 'versions']);
  }
  t.equal(r.code, 6, 'cosictl: the machine refused this client (exit 6)');
  t.match(r.err, new RegExp('the machine refused this client\'s certificate: .* expired 20\\d\\d-.*, the machine\'s '
    + 'clock is likely wrong: the clock reads 2060-01-01T'));
  common(t, m.vm.console());
  rows.push({ name: 'q35, RTC 2060', devices: 'q35, -nodefaults, virtio-net', ready: ready ? Number(ready[1]).toFixed(2)
    : '-', clock: 'icount', notes: 'API: refused, the clock named' });
});

await t.test('no NIC: ready, and nothing fatal', async (t) => {
  const a = artifacts();
  const vm = launch({ kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline, nics: [], extraArgs: ICOUNT });
  t.teardown(() => vm.kill());
  const ready = await vm.waitFor(READY_RE, 180_000);
  // Every plugin runs (the second wave starts once the network plugin runs, link or none): none needed a link.
  await vm.waitFor(milestoneLine('plugins'), 120_000);
  common(t, vm.console());
  rows.push({ name: 'no NIC', devices: 'q35, -nodefaults, no network device', ready: Number(ready[1]).toFixed(2),
    clock: 'icount', notes: 'no API to reach' });
});
