// kernel-module-merge: KernelModuleSpecs of every layer -> one MergedKernelModuleSpec per
// module (id = its name with _ for -): the highest layer's parameters.
import { mergeController } from '../../sdk/merge-controller.ts';
import { type KernelModuleSpecSpec } from '../types.ts';
import { moduleNameOf } from '../../../machinery/kernel/modules-dep.ts';
import {
  KERNEL_MODULE_SPEC_TYPE, MERGED_KERNEL_MODULE_SPEC_TYPE, SYSTEM_NS,
} from '../../../proto/gen/resource-types.ts';

export const kernelModuleMergeController = () => mergeController<KernelModuleSpecSpec>({
  name: 'kernel-module-merge', namespace: SYSTEM_NS, inputType: KERNEL_MODULE_SPEC_TYPE,
  outputType: MERGED_KERNEL_MODULE_SPEC_TYPE,
  key: (s, id) => moduleNameOf(s.module ?? id),
  combine: 'winner',
});
