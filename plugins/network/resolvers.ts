// resolvers: ResolverSpecs (one per source) -> the winning layer -> /etc/resolv.conf
// -> ResolverStatus "resolvers".
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Controller } from '../../init/cosi/controller/contract.ts';
import { winningSpec } from './layers.ts';
import { NETWORK_NS, RESOLVER_SPEC_TYPE, RESOLVER_STATUS_TYPE, type ResolverSpecSpec, type ResolverStatusSpec } from './types.ts';

export function resolvConf(s: ResolverSpecSpec): string {
  return [
    '# written by the network plugin (ResolverSpec); edit the resource, not this file',
    ...s.servers.slice(0, 3).map((ip) => `nameserver ${ip}`),
    ...(s.searchDomains?.length ? [`search ${s.searchDomains.join(' ')}`] : []),
  ].join('\n') + '\n';
}

export function resolversController(etc = '/etc'): Controller {
  return {
    name: 'resolvers',
    inputs: () => [{ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, kind: 'weak' }],
    outputs: () => [{ type: RESOLVER_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      while (await ctx.next()) {
        const win = await winningSpec<ResolverSpecSpec>(ctx.state, RESOLVER_SPEC_TYPE);
        if (!win) continue;
        let status: ResolverStatusSpec = { servers: win.spec.servers.slice(0, 3), searchDomains: win.spec.searchDomains ?? [], source: win.id };
        try { mkdirSync(etc, { recursive: true }); writeFileSync(join(etc, 'resolv.conf'), resolvConf(win.spec)); } catch (e) { status = { ...status, error: (e as Error).message }; }
        await ctx.state.put({ namespace: NETWORK_NS, type: RESOLVER_STATUS_TYPE, id: 'resolvers' }, status);
      }
    },
  };
}
