// hostname-merge: HostnameSpecs of every layer -> MergedHostnameSpec "hostname": the
// highest layer's.
import { mergeController } from '../sdk/merge-controller.ts';
import { type HostnameSpecSpec } from './types.ts';
import { HOSTNAME_SPEC_TYPE, MERGED_HOSTNAME_SPEC_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

export const HOSTNAME_ID = 'hostname';

export const hostnameMergeController = () => mergeController<HostnameSpecSpec>({
  name: 'hostname-merge', namespace: NETWORK_NS, inputType: HOSTNAME_SPEC_TYPE, outputType: MERGED_HOSTNAME_SPEC_TYPE,
  key: () => HOSTNAME_ID,
  combine: 'winner',
});
