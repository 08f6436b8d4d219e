// mount-merge and mount-spec without root: the block devices are seeded resources and
// the kernel's mount table an in-memory one behind MountKernel (storage.test.ts mounts
// real loop devices as root).
import t from 'tap';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { addFinalizer, removeFinalizer } from '../../cosi/state/finalizers.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { mountMergeController } from './mount-merge.ts';
import { mountSpecController, type MountKernel } from './mount-spec.ts';
import {
  BLOCK_DEVICE_TYPE, MOUNT_SPEC_TYPE, MOUNT_SPEC_STATUS_TYPE, STORAGE_NS,
} from '../../proto/gen/resource-types.ts';

const table = new Map<string, { device: string; fstype: string; flags: number; data: string }>();
const kernel: MountKernel = {
  mounted: () => new Set(table.keys()),
  mount: (device, target, fstype, flags, data) => {
    if (table.has(target)) throw Object.assign(new Error(`mount ${target}: EBUSY`), { code: 'EBUSY' });
    if (fstype === 'xfs') throw Object.assign(
      new Error(`mount ${device}: ENODEV (unknown filesystem type)`), { code: 'ENODEV' },
    );
    table.set(target, { device, fstype, flags, data });
  },
  unmount: (target) => {
    if (!table.delete(target)) throw Object.assign(new Error(`umount ${target}: EINVAL`), { code: 'EINVAL' });
  },
};
const disk = (name: string, extra: object) =>
  newResource({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, id: name }, {
    devPath: `/dev/${name}`, major: 254, minor: 0, sizeBytes: 1 << 24, readOnly: false, removable: false,
    partition: false, ...extra,
  });
const h = await controllerHarness(t, [mountMergeController(), mountSpecController(kernel)], {
  codecs: builtinCodecs(builtinTypes()),
  seed: [
    disk('vda', { fstype: 'ext4', label: 'appdata', uuid: 'c0ffee00-0000-4000-8000-000000000001' }), disk('vdb', {}),
  ],
});
const spec = (id: string) => ({ namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE, id });
const status = (target: string) =>
  h.spec<Record<string, unknown>>({ namespace: STORAGE_NS, type: MOUNT_SPEC_STATUS_TYPE, id: target });

t.test('by label and by UUID; the options become flags and data', async (t) => {
  await h.create(spec('data'), {
    source: 'LABEL=appdata', target: '/var/mnt/data', options: ['ro', 'nodev', 'errors=remount-ro'],
  });
  t.match(await h.until(async () => (await status('/var/mnt/data'))?.state, 'applied') && await status('/var/mnt/data'),
    { state: 'applied', device: '/dev/vda', fstype: 'ext4', layer: 'config',
      applied: { device: '/dev/vda', target: '/var/mnt/data' } });
  t.same(table.get('/var/mnt/data'), { device: '/dev/vda', fstype: 'ext4', flags: 1 | 4, data: 'errors=remount-ro' });
});

t.test('two layers naming one target: the highest wins, the other takes over when it goes', async (t) => {
  await h.create(spec('platform-data'), {
    source: 'UUID=C0FFEE00-0000-4000-8000-000000000001', target: '/var/mnt/data', layer: 'platform',
  });
  await new Promise((r) => setTimeout(r, 100));
  t.equal((await status('/var/mnt/data'))?.layer, 'config', 'config over platform');
  await h.remove(spec('data'));
  t.equal(await h.until(async () => (await status('/var/mnt/data'))?.layer, 'platform'), 'platform',
    'the platform layer now');
  t.ok(table.has('/var/mnt/data'), 'still mounted: the same target is still wanted');
  await h.remove(spec('platform-data'));
  t.notOk(table.has('/var/mnt/data'), 'unmounted once no layer wants it');
});

t.test('no device yet, no filesystem, refused by the kernel: each says why', async (t) => {
  await h.create(spec('later'), { source: 'LABEL=not-yet', target: '/var/mnt/later' });
  await h.create(spec('blank'), { source: '/dev/vdb', target: '/var/mnt/blank' });
  await h.create(spec('xfs'), { source: '/dev/vda', target: '/var/mnt/xfs', fstype: 'ext4' });
  t.match(await h.until(async () => (await status('/var/mnt/later'))?.state, 'pending')
    && await status('/var/mnt/later'), { error: /no block device matches LABEL=not-yet/ });
  t.match(await h.until(async () => (await status('/var/mnt/blank'))?.state, 'error') && await status('/var/mnt/blank'),
    { error: /cannot tell the filesystem on \/dev\/vdb; set fstype/ });
  await h.create({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, id: 'vdc' }, {
    devPath: '/dev/vdc', major: 254, minor: 32, sizeBytes: 1, readOnly: false, removable: false, partition: false,
    label: 'not-yet', fstype: 'ext4',
  });
  t.equal(await h.until(async () => (await status('/var/mnt/later'))?.state, 'applied'), 'applied',
    'a device that appears later is mounted');
  for (const id of ['later', 'blank', 'xfs']) await h.remove(spec(id));
  t.same([...table.keys()], [], 'all unmounted');
});

t.test('a dependant holding the status delays the unmount', async (t) => {
  await h.create(spec('held'), { source: 'LABEL=appdata', target: '/var/mnt/held' });
  await h.until(async () => (await status('/var/mnt/held'))?.state, 'applied');
  const st = { namespace: STORAGE_NS, type: MOUNT_SPEC_STATUS_TYPE, id: '/var/mnt/held' };
  await addFinalizer(h.state, st, 'dependant');
  let gone = false;
  const removing = h.remove(spec('held')).then(() => {
    gone = true;
  });
  await new Promise((r) => setTimeout(r, 200));
  t.notOk(gone, 'the delete waits');
  t.ok(table.has('/var/mnt/held'), 'still mounted');
  await removeFinalizer(h.state, st, 'dependant');
  await removing;
  t.notOk(table.has('/var/mnt/held'), 'then unmounted');
});
