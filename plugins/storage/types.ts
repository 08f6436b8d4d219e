// types: the storage plugin's resources, in the `storage` namespace (proto/appliance/storage).
//   BlockDevice   every block device (sysfs + uevents), with what its superblock says
//   MountSpec     a filesystem to mount, per layer -> MergedMountSpec (id = target) -> MountStatus
//   EphemeralStatus  the disk image's EPHEMERAL partition: mounted at /var, grown to its disk
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { col, declaredAndMerged, ERROR_COLUMN, LAYER_COLUMN, STATE_COLUMN } from '../sdk/definitions.ts';

export type {
  BlockDeviceSpec, EphemeralStatusSpec, FsType, MountSpecSpec, MountStatusSpec,
} from '../../proto/gen/spec-types.ts';

import { MERGED_MOUNT_SPEC_TYPE, MOUNT_STATUS_TYPE, STORAGE_NS } from '../../machinery/model/storage-names.ts';

export { MERGED_MOUNT_SPEC_TYPE, MOUNT_STATUS_TYPE, STORAGE_NS };
export const BLOCK_DEVICE_TYPE = 'BlockDevices.storage.appliance.dev';
export const MOUNT_SPEC_TYPE = 'MountSpecs.storage.appliance.dev';
export const EPHEMERAL_STATUS_TYPE = 'EphemeralStatuses.storage.appliance.dev';

export const STORAGE_TYPES: DefinitionInput[] = [
  {
    type: BLOCK_DEVICE_TYPE, defaultNamespace: STORAGE_NS, aliases: ['disks'], protoMessage: MESSAGES.BlockDeviceSpec,
    printColumns: [col('Size', 'sizeBytes'), col('FSType', 'fstype'), col('Label', 'label'), col('Parent', 'parent')],
  },
  ...declaredAndMerged({
    type: MOUNT_SPEC_TYPE, defaultNamespace: STORAGE_NS, protoMessage: MESSAGES.MountSpecSpec,
    printColumns: [col('Source', 'source'), col('Target', 'target'), col('FSType', 'fstype'), LAYER_COLUMN],
  }, MERGED_MOUNT_SPEC_TYPE),
  {
    type: MOUNT_STATUS_TYPE, defaultNamespace: STORAGE_NS, protoMessage: MESSAGES.MountStatusSpec,
    printColumns: [
      col('Target', 'target'), STATE_COLUMN, col('Device', 'device'), col('FSType', 'fstype'), ERROR_COLUMN,
    ],
  },
  {
    type: EPHEMERAL_STATUS_TYPE, defaultNamespace: STORAGE_NS, aliases: ['ephemeral'],
    protoMessage: MESSAGES.EphemeralStatusSpec,
    printColumns: [
      col('Device', 'device'), STATE_COLUMN, col('Partition', 'partitionBytes'), col('Filesystem', 'filesystemBytes'),
      col('Grew', 'grew'), ERROR_COLUMN,
    ],
  },
];
