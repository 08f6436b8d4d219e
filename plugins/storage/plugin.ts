// storage: block devices (sysfs, superblocks, uevents) and mounts.
import { native } from '../../native/index.ts';
import type { Plugin } from '../../init/model/plugin.ts';
import { blockDeviceStatusController } from './block-device-status.ts';
import { mountMergeController } from './mount-merge.ts';
import { mountSpecController, nativeMountKernel } from './mount-spec.ts';
import { STORAGE_NS, STORAGE_TYPES } from './types.ts';

export const storagePlugin: Plugin = {
  name: 'storage',
  description: 'Block devices from sysfs and uevents, with their filesystems; MountSpecs mounted and unmounted.',
  namespaces: () => ({ [STORAGE_NS]: 'Disks, filesystems and mounts.' }),
  types: () => STORAGE_TYPES,
  capabilities: ['CAP_SYS_ADMIN'], // mount(2), umount2(2)
  controllers: () => [
    blockDeviceStatusController(native), mountMergeController(), mountSpecController(nativeMountKernel(native)),
  ],
};
