// storage: block devices (sysfs, superblocks, uevents) and mounts.
import { native } from '../../native/index.ts';
import { inHostMode, type Plugin } from '../../machinery/model/plugin.ts';
import { blockDeviceStatusController } from './block-device-status.ts';
import { ephemeralController, nativeEphemeralKernel } from './ephemeral.ts';
import { mountMergeController } from './mount-merge.ts';
import { mountSpecController, nativeMountKernel } from './mount-spec.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';
import { STORAGE_NS } from '../../proto/gen/resource-types.ts';

export const storagePlugin: Plugin = {
  name: 'storage',
  description: 'Block devices from sysfs and uevents, with their filesystems; MountSpecs mounted and unmounted; '
    + 'the disk image\'s EPHEMERAL partition grown to its disk and mounted at /var.',
  namespaces: () => ({ [STORAGE_NS]: 'Disks, filesystems and mounts.' }),
  types: () => definitionsServedBy('storage'),
  // mount(2), umount2(2), BLKPG; CAP_SYS_RESOURCE for EXT4_IOC_RESIZE_FS (ext4 grows only for it).
  capabilities: ['CAP_SYS_ADMIN', 'CAP_SYS_RESOURCE'],
  syscalls: ['mount', 'umount2'],
  hostMounts: true, // what it mounts is the machine's
  controllers: () => [
    blockDeviceStatusController(native), mountSpecController(nativeMountKernel(native)),
    // A host's disks are its own: `serve` never grows or mounts them.
    ...(inHostMode() ? [] : [ephemeralController(nativeEphemeralKernel(native))]),
  ],
  // Layers in, one spec per target out: on the engine (Plugin.engineControllers).
  engineControllers: () => [mountMergeController()],
};
