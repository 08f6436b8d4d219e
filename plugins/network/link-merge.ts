// link-merge: LinkSpecs of every layer -> one MergedLinkSpec per link, field by field
// (the default layer's up with config's MTU).
import { mergeController } from '../sdk/merge-controller.ts';
import { type LinkSpecSpec } from './types.ts';
import { LINK_SPEC_TYPE, MERGED_LINK_SPEC_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

export const linkMergeController = () => mergeController<LinkSpecSpec>({
  name: 'link-merge', namespace: NETWORK_NS, inputType: LINK_SPEC_TYPE, outputType: MERGED_LINK_SPEC_TYPE,
  key: (s, id) => s.link ?? id,
  combine: 'fields',
});
