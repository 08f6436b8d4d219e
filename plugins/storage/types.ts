// types: the storage plugin's resources, in the `storage` namespace.
//   BlockDevice   every block device (sysfs + uevents), with what its superblock says
//   MountSpec     a filesystem to mount (source by path, LABEL= or UUID=); MountStatus per spec
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';

export const STORAGE_NS = 'storage';
export const BLOCK_DEVICE_TYPE = 'BlockDevices.storage.appliance.dev';
export const MOUNT_SPEC_TYPE = 'MountSpecs.storage.appliance.dev';
export const MOUNT_STATUS_TYPE = 'MountStatuses.storage.appliance.dev';

export interface BlockDeviceSpec {
  devPath: string; major: number; minor: number; sizeBytes: number; readOnly: boolean; removable: boolean;
  partition: boolean; parent?: string; partitions: string[]; fstype?: string; label?: string; uuid?: string;
}
export interface MountSpecSpec { source: string; target: string; fstype?: string; options?: string[] }
export interface MountStatusSpec { state: 'mounted' | 'pending' | 'error'; target: string; device?: string; fstype?: string; error?: string }

export const STORAGE_TYPES: DefinitionInput[] = [
  {
    type: BLOCK_DEVICE_TYPE, defaultNamespace: STORAGE_NS, aliases: ['disks'],
    printColumns: [{ name: 'Size', jsonPath: '{.sizeBytes}' }, { name: 'FSType', jsonPath: '{.fstype}' }, { name: 'Label', jsonPath: '{.label}' }, { name: 'Parent', jsonPath: '{.parent}' }],
  },
  {
    type: MOUNT_SPEC_TYPE, defaultNamespace: STORAGE_NS,
    printColumns: [{ name: 'Source', jsonPath: '{.source}' }, { name: 'Target', jsonPath: '{.target}' }],
    schema: {
      type: 'object', required: ['source', 'target'],
      properties: {
        source: { type: 'string', pattern: '^(/dev/[\\w./-]+|LABEL=.{1,64}|UUID=[0-9A-Fa-f-]{4,36})$' },
        target: { type: 'string', pattern: '^/(var|mnt|srv|run|data)(/[\\w.-]+)*$' },
        fstype: { type: 'string', enum: ['ext4', 'ext3', 'ext2', 'vfat', 'iso9660', 'squashfs', 'tmpfs'] },
        options: { type: 'array', maxItems: 16, items: { type: 'string', pattern: '^[\\w=,.-]{1,64}$' } },
      },
    },
  },
  {
    type: MOUNT_STATUS_TYPE, defaultNamespace: STORAGE_NS,
    printColumns: [{ name: 'State', jsonPath: '{.state}' }, { name: 'Device', jsonPath: '{.device}' }, { name: 'Target', jsonPath: '{.target}' }, { name: 'Error', jsonPath: '{.error}' }],
  },
];
