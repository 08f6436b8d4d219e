// types: the system plugin's resources, in the `system` namespace (proto/appliance/system).
//   KernelParamSpec     a sysctl to set, per layer -> MergedKernelParamSpec (id = key) -> KernelParamStatus
//   KernelModuleSpec    a module to load, per layer -> MergedKernelModuleSpec (id = module) -> KernelModuleSpecStatus
//   KernelModuleStatus  every module in /proc/modules (lsmod), and whether a spec asks for it
//   Device              each device on the pci, usb, virtio and scsi buses, its driver and matching modules
//   FileSpec            a file on /run, /var or /tmp, per layer -> MergedFileSpec (id = path) -> FileStatus
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { col, declaredAndMerged, ERROR_COLUMN, LAYER_COLUMN, STATE_COLUMN } from '../sdk/definitions.ts';

export type {
  DeviceSpec, FileSpecSpec, FileStatusSpec, KernelModuleSpecSpec, KernelModuleSpecStatusSpec, KernelModuleStatusSpec,
  KernelParamSpecSpec, KernelParamStatusSpec,
} from '../../proto/gen/spec-types.ts';

export const SYSTEM_NS = 'system';
export const KERNEL_PARAM_SPEC_TYPE = 'KernelParamSpecs.system.appliance.dev';
export const MERGED_KERNEL_PARAM_SPEC_TYPE = 'MergedKernelParamSpecs.system.appliance.dev';
export const KERNEL_PARAM_STATUS_TYPE = 'KernelParamStatuses.system.appliance.dev';
export const KERNEL_MODULE_SPEC_TYPE = 'KernelModuleSpecs.system.appliance.dev';
export const MERGED_KERNEL_MODULE_SPEC_TYPE = 'MergedKernelModuleSpecs.system.appliance.dev';
export const KERNEL_MODULE_SPEC_STATUS_TYPE = 'KernelModuleSpecStatuses.system.appliance.dev';
export const KERNEL_MODULE_STATUS_TYPE = 'KernelModuleStatuses.system.appliance.dev';
export const DEVICE_TYPE = 'Devices.system.appliance.dev';
export const FILE_SPEC_TYPE = 'FileSpecs.system.appliance.dev';
export const MERGED_FILE_SPEC_TYPE = 'MergedFileSpecs.system.appliance.dev';
export const FILE_STATUS_TYPE = 'FileStatuses.system.appliance.dev';

export const SYSTEM_TYPES: DefinitionInput[] = [
  ...declaredAndMerged({
    type: KERNEL_PARAM_SPEC_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['sysctl', 'sysctls'],
    protoMessage: MESSAGES.KernelParamSpecSpec,
    printColumns: [col('Value', 'value'), LAYER_COLUMN],
  }, MERGED_KERNEL_PARAM_SPEC_TYPE),
  {
    type: KERNEL_PARAM_STATUS_TYPE, defaultNamespace: SYSTEM_NS, protoMessage: MESSAGES.KernelParamStatusSpec,
    printColumns: [STATE_COLUMN, col('Value', 'value'), col('Original', 'original'), LAYER_COLUMN, ERROR_COLUMN],
  },
  ...declaredAndMerged({
    type: KERNEL_MODULE_SPEC_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['modules', 'kmod'],
    protoMessage: MESSAGES.KernelModuleSpecSpec,
    printColumns: [col('Parameters', 'parameters'), LAYER_COLUMN],
  }, MERGED_KERNEL_MODULE_SPEC_TYPE),
  {
    type: KERNEL_MODULE_SPEC_STATUS_TYPE, defaultNamespace: SYSTEM_NS,
    protoMessage: MESSAGES.KernelModuleSpecStatusSpec,
    printColumns: [STATE_COLUMN, col('Loaded', 'loaded'), col('Builtin', 'builtin'), LAYER_COLUMN, ERROR_COLUMN],
  },
  ...declaredAndMerged({
    // Files often carry credentials: content (and what was there before) is for admins only.
    type: FILE_SPEC_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['files'], protoMessage: MESSAGES.FileSpecSpec,
    sensitive: true,
    printColumns: [col('Path', 'path'), col('Mode', 'mode'), LAYER_COLUMN],
  }, MERGED_FILE_SPEC_TYPE),
  {
    type: FILE_STATUS_TYPE, defaultNamespace: SYSTEM_NS, protoMessage: MESSAGES.FileStatusSpec, sensitive: true,
    printColumns: [STATE_COLUMN, col('Size', 'size'), col('SHA256', 'sha256'), LAYER_COLUMN, ERROR_COLUMN],
  },
  {
    type: KERNEL_MODULE_STATUS_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['lsmod'],
    protoMessage: MESSAGES.KernelModuleStatusSpec,
    printColumns: [col('Size', 'size'), col('Used', 'refCount'), col('By', 'usedBy'), col('Requested', 'requested')],
  },
  {
    type: DEVICE_TYPE, defaultNamespace: SYSTEM_NS, aliases: ['devices', 'dev'], protoMessage: MESSAGES.DeviceSpec,
    printColumns: [col('Driver', 'driver'), col('Modules', 'modules'), col('Vendor', 'vendor'), col('Device', 'device'),
      col('Class', 'class'), ERROR_COLUMN],
  },
];
