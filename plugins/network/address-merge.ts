// address-merge: AddressSpecs of every layer -> one MergedAddressSpec per address on a
// link (id link/address); the same address declared twice is one address.
import { mergeController } from '../sdk/merge-controller.ts';
import { type AddressSpecSpec } from './types.ts';
import { ADDRESS_SPEC_TYPE, MERGED_ADDRESS_SPEC_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

export const addressMergeController = () => mergeController<AddressSpecSpec>({
  name: 'address-merge', namespace: NETWORK_NS, inputType: ADDRESS_SPEC_TYPE, outputType: MERGED_ADDRESS_SPEC_TYPE,
  key: (s) => `${s.link}/${s.address}`,
  combine: 'winner',
});
