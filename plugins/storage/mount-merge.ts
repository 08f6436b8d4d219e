// mount-merge: MountSpecs of every layer -> one MergedMountSpec per target (id = the
// target path): the highest layer's.
import { mergeController } from '../sdk/merge-controller.ts';
import { type MountSpecSpec } from './types.ts';
import { MERGED_MOUNT_SPEC_TYPE, MOUNT_SPEC_TYPE, STORAGE_NS } from '../../proto/gen/resource-types.ts';

export const mountMergeController = () => mergeController<MountSpecSpec>({
  name: 'mount-merge', namespace: STORAGE_NS, inputType: MOUNT_SPEC_TYPE, outputType: MERGED_MOUNT_SPEC_TYPE,
  key: (s) => s.target,
  combine: 'winner',
});
