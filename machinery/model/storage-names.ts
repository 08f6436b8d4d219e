// storage-names: the names of the storage plugin's resources the engine watches (health wants every
// declared mount mounted). plugins/storage/types.ts defines the types with these names.
export const STORAGE_NS = 'storage';
export const MERGED_MOUNT_SPEC_TYPE = 'MergedMountSpecs.storage.appliance.dev';
export const MOUNT_STATUS_TYPE = 'MountStatuses.storage.appliance.dev';
