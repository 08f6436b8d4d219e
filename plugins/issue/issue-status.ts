// issue-status: Motds (config) + Version (runtime) -> Issue "banner" (runtime).
// Motds are joined by priority, then id.
import type { Controller } from '../../cosi/controller/contract.ts';
import { type VersionSpec } from '../../machinery/model/runtime-types.ts';
import { type IssueSpec, type MotdSpec } from './types.ts';
import { CONFIG_NS, ISSUE_TYPE, MOTD_TYPE, RUNTIME_NS, VERSION_TYPE } from '../../proto/gen/resource-types.ts';

export const ISSUE_ID = 'banner';

export function renderIssue(version: VersionSpec | undefined, motds: { id: string; spec: MotdSpec }[]): IssueSpec {
  const sorted = [...motds].sort((a, b) => (a.spec.priority ?? 50) - (b.spec.priority ?? 50) || (a.id < b.id ? -1 : 1));
  const head = version ? `appliance ${version.version} (${version.commit}), kernel ${version.kernel}` : 'appliance';
  return { text: [head, ...sorted.map((m) => m.spec.text)].join('\n'), motds: sorted.map((m) => m.id) };
}

export function issueStatusController(): Controller {
  return {
    name: 'issue-status',
    inputs: () => [
      { namespace: CONFIG_NS, type: MOTD_TYPE, kind: 'weak' },
      { namespace: RUNTIME_NS, type: VERSION_TYPE, kind: 'weak' },
    ],
    outputs: () => [{ type: ISSUE_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      while (await ctx.next()) {
        const versionRes = await ctx.state.find({ namespace: RUNTIME_NS, type: VERSION_TYPE, id: 'appliance' });
        const version = versionRes?.spec as VersionSpec | undefined;
        const motds = (await ctx.state.list({ namespace: CONFIG_NS, type: MOTD_TYPE }))
          .filter((r) => r.metadata.phase === 'running')
          .map((r) => ({ id: r.metadata.id, spec: r.spec as MotdSpec }));
        const issue = renderIssue(version, motds);
        await ctx.state.put({ namespace: RUNTIME_NS, type: ISSUE_TYPE, id: ISSUE_ID }, issue);
      }
    },
  };
}
