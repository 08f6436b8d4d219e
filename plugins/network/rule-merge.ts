// rule-merge: RuleSpecs of every layer -> one MergedRuleSpec per family, priority and match
// (from, to, mark, tos): the highest layer's table wins.
import { ipFamily } from '../../machinery/sys/ip-literal.ts';
import { mergeController } from '../sdk/merge-controller.ts';
import { type RuleSpecSpec } from './types.ts';
import { MERGED_RULE_SPEC_TYPE, NETWORK_NS, RULE_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

/** The rule's family: that of its from or to, else the one it names (4 when none). */
export function ruleFamily(s: RuleSpecSpec): 4 | 6 {
  const ip = (s.from ?? s.to)?.split('/')[0];
  if (ip) return ipFamily(ip) === 6 ? 6 : 4;
  return s.family === 6 ? 6 : 4;
}

/** The merged id: ipv4|ipv6, priority (or "auto"), then each match that is set. */
export function ruleKey(s: RuleSpecSpec): string {
  return [`ipv${ruleFamily(s)}`, s.priority ?? 'auto', `from-${s.from ?? 'all'}`, ...(s.to ? [`to-${s.to}`] : []),
    ...(s.mark !== undefined ? [`mark-${s.mark}`] : []), ...(s.tos ? [`tos-${s.tos}`] : [])].join('/');
}

export const ruleMergeController = () => mergeController<RuleSpecSpec>({
  name: 'rule-merge', namespace: NETWORK_NS, inputType: RULE_SPEC_TYPE, outputType: MERGED_RULE_SPEC_TYPE,
  key: ruleKey,
  combine: 'winner',
});
