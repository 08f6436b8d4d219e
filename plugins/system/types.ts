// types: the system plugin's resources, in the `system` namespace (proto/appliance/system).
//   KernelParamSpec     a sysctl to set, per layer -> MergedKernelParamSpec (id = key) -> KernelParamSpecStatus
//   KernelModuleSpec    a module to load, per layer -> MergedKernelModuleSpec (id = module) -> KernelModuleSpecStatus
//   KernelModuleStatus  every module in /proc/modules (lsmod), and whether a spec asks for it
//   Device              each device on the pci, usb, virtio and scsi buses, its driver and matching modules
//   FileSpec            a file on /run, /var or /tmp, per layer -> MergedFileSpec (id = path) -> FileSpecStatus
// Each type is defined once, by its spec message's (appliance.v1alpha1.resource) option in the .proto:
// proto/gen/resource-types.ts has its constant and definition (this plugin's types() serves them).
export type {
  DeviceSpec, FileSpecSpec, FileSpecStatusSpec, KernelModuleSpecSpec, KernelModuleSpecStatusSpec,
  KernelModuleStatusSpec,
  KernelParamSpecSpec, KernelParamSpecStatusSpec,
} from '../../proto/gen/spec-types.ts';
