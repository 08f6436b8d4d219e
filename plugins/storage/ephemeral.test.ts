// ephemeral without root: a real disk image (our GPT, a real ext4 made by mkfs.ext4 in the
// EPHEMERAL partition) behind EphemeralKernel, grown as `qemu-img resize` grows a cloud
// disk; the partition ioctl and the online ext4 resize recorded. QEMU boots the real thing
// (qemu/images.test.ts).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { encodeGpt, guidFrom, PARTITION_TYPE, SECTOR, TAIL_SECTORS, type Gpt } from '../../machinery/disk/gpt.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { ephemeralController, type EphemeralKernel } from './ephemeral.ts';
import { BLOCK_DEVICE_TYPE, EPHEMERAL_STATUS_TYPE, STORAGE_NS } from '../../proto/gen/resource-types.ts';

const MiB = 2048;
const dir = mkdtempSync(join(tmpdir(), 'ephemeral-'));
const disk = join(dir, 'disk.img');
const small = 64 * MiB;
const gpt: Gpt = {
  diskGuid: guidFrom('d'), sectors: small,
  partitions: [
    { type: PARTITION_TYPE.esp, guid: guidFrom('e'), name: 'EFI', firstLba: MiB, lastLba: 9 * MiB - 1 },
    { type: PARTITION_TYPE.linuxData, guid: guidFrom('x'), name: 'EPHEMERAL', firstLba: 9 * MiB,
      lastLba: small - TAIL_SECTORS - 1 },
  ],
};
const partStart = 9 * MiB * SECTOR;
closeSync(openSync(disk, 'w'));
truncateSync(disk, small * SECTOR);
const fs = join(dir, 'fs.img');
const fsMiB = Math.floor((small - 9 * MiB - TAIL_SECTORS) / MiB);
execFileSync('mkfs.ext4', ['-q', '-F', '-b', '4096', '-L', 'EPHEMERAL', fs, `${fsMiB}M`]);
{
  const fd = openSync(disk, 'r+');
  const { head, tail } = encodeGpt(gpt, Buffer.alloc(440, 0xaa));
  writeSync(fd, head, 0, head.length, 0);
  writeSync(fd, tail, 0, tail.length, (small - TAIL_SECTORS) * SECTOR);
  const b = Buffer.alloc(statSync(fs).size);
  const f = openSync(fs, 'r');
  readSync(f, b, 0, b.length, 0);
  closeSync(f);
  writeSync(fd, b, 0, b.length, partStart);
  closeSync(fd);
}
truncateSync(disk, 2 * small * SECTOR); // the cloud gave a larger disk

const resized: unknown[][] = [];
const grown: unknown[][] = [];
const at = (dev: string) => (dev === '/dev/vda' ? 0 : dev === '/dev/vda2' ? partStart : NaN);
const kernel: EphemeralKernel = {
  sectors: (name) => (name === 'vda' ? statSync(disk).size / SECTOR : NaN),
  partitionNumber: (name) => (name === 'vda2' ? 2 : NaN),
  read: (dev, off, length) => {
    const fd = openSync(disk, 'r');
    const b = Buffer.alloc(length);
    try {
      return b.subarray(0, readSync(fd, b, 0, length, at(dev) + off));
    } finally {
      closeSync(fd);
    }
  },
  write: (dev, off, data) => {
    if (dev !== '/dev/vda') throw new Error(`wrote ${dev}`);
    const fd = openSync(disk, 'r+');
    try {
      writeSync(fd, data, 0, data.length, off);
    } finally {
      closeSync(fd);
    }
  },
  resizePartition: (...a) => { resized.push(a); },
  growExt4: (...a) => { grown.push(a); },
  mountedDevice: (target) => mounts.get(target),
  availableBytes: () => available,
};
let available = 1 << 30;
const mounts = new Map<string, string>();
const device = (name: string, spec: object) => newResource({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, id: name },
  { devPath: `/dev/${name}`, major: 254, minor: 0, readOnly: false, removable: false, ...spec });

const seed = () => [
  device('vda', { sizeBytes: 2 * small * SECTOR, partition: false, partitions: ['vda1', 'vda2'] }),
  device('vda2', {
    sizeBytes: (small - 9 * MiB - TAIL_SECTORS) * SECTOR, partition: true, parent: 'vda', fstype: 'ext4',
    label: 'EPHEMERAL',
  }),
];

t.test('an EPHEMERAL that is not on /var (a live system\'s disk, one it installs to) is left alone', async (t) => {
  const h = await controllerHarness(t, [ephemeralController(kernel)], {
    codecs: builtinCodecs(builtinTypes()), seed: seed(),
  });
  const status = () => h.spec<Record<string, unknown>>({ namespace: STORAGE_NS, type: EPHEMERAL_STATUS_TYPE,
    id: 'ephemeral' });
  t.match(await h.until(async () => (await status())?.state, 'pending') && await status(),
    { state: 'pending', grew: '', error: 'waiting for /dev/vda2 on /var' });
  t.same(resized, [], 'no partition ioctl');
  t.same(grown, [], 'no filesystem ioctl');
  t.equal(JSON.parse(execFileSync('sfdisk', ['--json', disk], { encoding: 'utf8' })).partitiontable.lastlba,
    small - TAIL_SECTORS - 1, 'the GPT as it was');
});

t.test('a larger disk: the GPT moved and the partition grown, then the ext4 mounted on /var', async (t) => {
  mounts.set('/var', '/dev/vda2'); // PID 1 mounted it at boot
  const h = await controllerHarness(t, [ephemeralController(kernel)], {
    codecs: builtinCodecs(builtinTypes()), seed: seed(),
  });
  const status = () => h.spec<Record<string, unknown>>({ namespace: STORAGE_NS, type: EPHEMERAL_STATUS_TYPE,
    id: 'ephemeral' });
  await h.until(async () => (await status())?.state, 'applied');
  const newLast = 2 * small - TAIL_SECTORS - 1;
  const bytes = (newLast - 9 * MiB + 1) * SECTOR;
  t.match(await status(), {
    state: 'applied', device: '/dev/vda2', disk: '/dev/vda', diskBytes: 2 * small * SECTOR, partitionBytes: bytes,
    grew: 'partition and filesystem',
  });
  t.same(resized, [['/dev/vda', 2, partStart, bytes]], 'the kernel told the new size');
  t.same(grown, [['/var', Math.floor(bytes / 4096)]], 'the ext4 grown to fill it, once');
  const table = JSON.parse(execFileSync('sfdisk', ['--json', disk], { encoding: 'utf8' })) as {
    partitiontable: { lastlba: number; partitions: { start: number; size: number }[] };
  };
  t.equal(table.partitiontable.lastlba, newLast);
  t.equal(table.partitiontable.partitions[1]!.start + table.partitiontable.partitions[1]!.size - 1, newLast);
  t.match(execFileSync('sfdisk', ['--verify', disk], { encoding: 'utf8' }), /No errors detected/);
  const mbr = kernel.read('/dev/vda', 0, 440);
  t.ok(mbr.every((b) => b === 0xaa), 'the boot code in the MBR kept');
});

t.test('already grown: nothing is written; not mounted on /var: pending, the filesystem left alone', async (t) => {
  mounts.delete('/var');
  const before = resized.length;
  const h = await controllerHarness(t, [ephemeralController(kernel)], {
    codecs: builtinCodecs(builtinTypes()),
    seed: [
      device('vda', { sizeBytes: 2 * small * SECTOR, partition: false, partitions: ['vda2'] }),
      device('vda2', { sizeBytes: 1, partition: true, parent: 'vda', fstype: 'ext4', label: 'EPHEMERAL' }),
    ],
  });
  const status = () => h.spec<Record<string, unknown>>({ namespace: STORAGE_NS, type: EPHEMERAL_STATUS_TYPE,
    id: 'ephemeral' });
  t.match(await h.until(async () => (await status())?.state, 'pending') && await status(),
    { state: 'pending', grew: '', error: 'waiting for /dev/vda2 on /var' });
  t.equal(resized.length, before, 'no partition ioctl');
  t.equal(grown.length, 1, 'no filesystem ioctl');
});

t.test('a full /var is said in the status, and no longer once space is freed', async (t) => {
  mounts.set('/var', '/dev/vda2');
  available = 4096;
  const h = await controllerHarness(t, [ephemeralController(kernel, { spaceCheckMs: 50 })], {
    codecs: builtinCodecs(builtinTypes()), seed: seed(),
  });
  const status = () => h.spec<Record<string, unknown>>({ namespace: STORAGE_NS, type: EPHEMERAL_STATUS_TYPE,
    id: 'ephemeral' });
  await h.until(async () => (await status())?.availableBytes, 4096);
  t.match(await status(), { state: 'applied', spaceProblem: /^\/var is full: 4 KiB left; extension fetches, / });
  available = 64 << 20;
  t.equal(await h.until(async () => (await status())?.availableBytes, 64 << 20), 64 << 20,
    'looked at again by itself');
  t.notOk((await status())?.spaceProblem);
});
