// rule-spec: MergedRuleSpec -> the routing policy rule in the kernel (RTM_NEWRULE) ->
// RuleSpecStatus. A rule whose table changed is replaced; the rule goes when its spec does.
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { parseCidr } from './address-spec.ts';
import { ruleFamily } from './rule-merge.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import type { RuleWant } from './rtnetlink/rule.ts';
import { type RuleSpecSpec, type RuleSpecStatusSpec } from './types.ts';
import { MERGED_RULE_SPEC_TYPE, NETWORK_NS, RULE_SPEC_STATUS_TYPE } from '../../proto/gen/resource-types.ts';

/** The rule as the kernel takes it; a family mismatch between from and to is the spec's error. */
export function ruleWant(s: RuleSpecSpec): RuleWant {
  const family = ruleFamily(s);
  const net = (cidr: string | undefined, what: string) => {
    if (cidr === undefined) return undefined;
    const c = parseCidr(cidr);
    if (c.family !== family) throw new Error(`${what} ${cidr} is IPv${c.family}, the rule is IPv${family}`);
    return { ip: c.ip, prefix: c.prefix };
  };
  const from = net(s.from, 'from');
  const to = net(s.to, 'to');
  return {
    family, table: s.table, ...(from ? { from } : {}), ...(to ? { to } : {}),
    ...(s.priority !== undefined ? { priority: s.priority } : {}), ...(s.mark !== undefined ? { mark: s.mark } : {}),
    ...(s.tos ? { tos: s.tos } : {}),
  };
}

const strip = (s: RuleSpecSpec): RuleSpecSpec => {
  const { layer: _layer, ...rest } = s;
  return rest;
};

export function ruleSpecController(rtnl: () => RtnlApi) {
  const describe = (s: RuleSpecSpec): RuleSpecStatusSpec => ({
    ...(s.from ? { from: s.from } : {}), ...(s.to ? { to: s.to } : {}), table: s.table,
    ...(s.priority !== undefined ? { priority: s.priority } : {}), layer: layerOf(s),
  });
  const remove = (applied: RuleSpecSpec) => {
    try {
      rtnl().rule('del', ruleWant(applied));
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) throw e;
    }
  };
  return specController<RuleSpecSpec, RuleSpecStatusSpec, undefined>({
    name: 'rule-spec', namespace: NETWORK_NS, specType: MERGED_RULE_SPEC_TYPE, statusType: RULE_SPEC_STATUS_TYPE,
    observe: async () => undefined,
    apply(_id, s, prev) {
      const want = strip(s);
      if (prev?.applied && JSON.stringify(prev.applied) !== JSON.stringify(want)) remove(prev.applied);
      try {
        rtnl().rule('add', ruleWant(want));
      } catch (e) {
        if (!isErrno(e, 'EEXIST')) throw e;
      }
      return { ...describe(s), state: 'applied', applied: want };
    },
    failed: (_id, s, prev, error) => ({
      ...describe(s), state: 'error', error, ...(prev?.applied ? { applied: prev.applied } : {}),
    }),
    undo(_id, prev) { if (prev.applied) remove(prev.applied); },
  });
}
