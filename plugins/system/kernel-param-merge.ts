// kernel-param-merge: KernelParamSpecs of every layer -> one MergedKernelParamSpec per
// key (id = the sysctl name): the highest layer's value.
import { mergeController } from '../sdk/merge-controller.ts';
import { type KernelParamSpecSpec } from './types.ts';
import { KERNEL_PARAM_SPEC_TYPE, MERGED_KERNEL_PARAM_SPEC_TYPE, SYSTEM_NS } from '../../proto/gen/resource-types.ts';

export const kernelParamMergeController = () => mergeController<KernelParamSpecSpec>({
  name: 'kernel-param-merge', namespace: SYSTEM_NS, inputType: KERNEL_PARAM_SPEC_TYPE,
  outputType: MERGED_KERNEL_PARAM_SPEC_TYPE,
  key: (s, id) => s.key ?? id,
  combine: 'winner',
});
