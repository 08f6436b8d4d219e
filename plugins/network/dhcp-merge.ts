// dhcp-merge: DhcpSpecs of every layer -> one MergedDhcpSpec per link, field by field.
import { mergeController } from '../sdk/merge-controller.ts';
import { DHCP_SPEC_TYPE, MERGED_DHCP_SPEC_TYPE, NETWORK_NS, type DhcpSpecSpec } from './types.ts';

export const dhcpMergeController = () => mergeController<DhcpSpecSpec>({
  name: 'dhcp-merge', namespace: NETWORK_NS, inputType: DHCP_SPEC_TYPE, outputType: MERGED_DHCP_SPEC_TYPE,
  key: (s, id) => s.link ?? id,
  combine: 'fields',
});
