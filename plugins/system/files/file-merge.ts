// file-merge: FileSpecs of every layer -> one MergedFileSpec per path (id = the path):
// the highest layer's whole spec.
import { mergeController } from '../../sdk/merge-controller.ts';
import { type FileSpecSpec } from '../types.ts';
import { FILE_SPEC_TYPE, MERGED_FILE_SPEC_TYPE, SYSTEM_NS } from '../../../proto/gen/resource-types.ts';

export const fileMergeController = () => mergeController<FileSpecSpec>({
  name: 'file-merge', namespace: SYSTEM_NS, inputType: FILE_SPEC_TYPE, outputType: MERGED_FILE_SPEC_TYPE,
  key: (s) => s.path,
  combine: 'winner',
});
