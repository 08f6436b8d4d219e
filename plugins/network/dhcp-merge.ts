// dhcp-merge: DhcpSpecs of every layer -> one MergedDhcpSpec per link, field by field.
import { mergeController } from '../sdk/merge-controller.ts';
import { type DhcpSpecSpec } from './types.ts';
import { DHCP_SPEC_TYPE, MERGED_DHCP_SPEC_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

export const dhcpMergeController = () => mergeController<DhcpSpecSpec>({
  name: 'dhcp-merge', namespace: NETWORK_NS, inputType: DHCP_SPEC_TYPE, outputType: MERGED_DHCP_SPEC_TYPE,
  key: (s, id) => s.link ?? id,
  combine: 'fields',
});
