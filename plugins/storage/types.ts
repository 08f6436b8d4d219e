// types: the storage plugin's resources, in the `storage` namespace (proto/appliance/storage).
//   BlockDevice   every block device (sysfs + uevents), with what its superblock says
//   MountSpec     a filesystem to mount, per layer -> MergedMountSpec (id = target) -> MountSpecStatus
//   EphemeralStatus  the disk image's EPHEMERAL partition: mounted at /var, grown to its disk
// Each type is defined once, by its spec message's (appliance.v1alpha1.resource) option in the .proto:
// proto/gen/resource-types.ts has its constant and definition (this plugin's types() serves them).
export type {
  BlockDeviceSpec, EphemeralStatusSpec, FsType, MountSpecSpec, MountSpecStatusSpec,
} from '../../proto/gen/spec-types.ts';
