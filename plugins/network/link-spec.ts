// link-spec: LinkSpec (id = link name) -> the link's MTU and up/down through rtnetlink
// -> LinkSpecStatus. Woken by LinkStatus too, so a link changed behind our back is put
// back. The MTU the link had before our first change is kept in the status and
// restored when the spec goes; the link is left up then (taking a link down because a
// spec was deleted could cut the machine off).
import type { Controller } from '../../init/cosi/controller/contract.ts';
import type { NetlinkError } from '../../init/netlink/netlink.ts';
import type { Rtnl } from './rtnetlink/client.ts';
import { LINK_SPEC_STATUS_TYPE, LINK_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, type ApplyState, type LinkSpecSpec, type LinkStatusSpec } from './types.ts';

export interface LinkSpecStatusSpec { state: ApplyState; link: string; up?: boolean; mtu?: number; originalMtu?: number; error?: string }

const FINALIZER = 'link-spec';

function explain(e: unknown, s: LinkSpecSpec): string {
  const code = (e as NetlinkError).code;
  if (code === 'EINVAL' && s.mtu !== undefined) return `the kernel refused MTU ${s.mtu} (EINVAL: outside what the link allows)`;
  return (e as Error).message;
}

export function linkSpecController(rtnl: () => Rtnl): Controller {
  return {
    name: 'link-spec',
    inputs: () => [
      { namespace: NETWORK_NS, type: LINK_SPEC_TYPE, kind: 'strong' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => [{ type: LINK_SPEC_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const sp = (id: string) => ({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id });
      while (await ctx.next()) {
        const links = new Map((await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE })).map((r) => [r.metadata.id, r.spec as LinkStatusSpec]));
        const statuses = new Map((await ctx.state.list({ namespace: NETWORK_NS, type: LINK_SPEC_STATUS_TYPE })).map((r) => [r.metadata.id, r.spec as LinkSpecStatusSpec]));
        const keep = new Set<string>();
        for (const r of await ctx.state.list({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE })) {
          const name = r.metadata.id;
          const prev = statuses.get(name);
          const link = links.get(name);
          if (r.metadata.phase === 'tearingDown') {
            if (!r.metadata.finalizers.includes(FINALIZER)) continue;
            if (link && prev?.originalMtu !== undefined && link.mtu !== prev.originalMtu) {
              try { rtnl().setLink(link.index, { mtu: prev.originalMtu }); } catch (e) { ctx.log.warn(`${name}: restoring MTU ${prev.originalMtu}: ${(e as Error).message}`); }
            }
            await ctx.state.removeFinalizer(sp(name));
            continue;
          }
          keep.add(name);
          if (!r.metadata.finalizers.includes(FINALIZER)) await ctx.state.addFinalizer(sp(name));
          const want = r.spec as LinkSpecSpec;
          const up = want.up ?? true;
          let status: LinkSpecStatusSpec;
          if (!link) {
            status = { state: 'pending', link: name, error: `link "${name}" does not exist (yet)`, ...(prev?.originalMtu !== undefined ? { originalMtu: prev.originalMtu } : {}) };
          } else {
            const originalMtu = prev?.originalMtu ?? (want.mtu !== undefined ? link.mtu : undefined);
            const change = { ...(link.up !== up ? { up } : {}), ...(want.mtu !== undefined && link.mtu !== want.mtu ? { mtu: want.mtu } : {}) };
            try {
              if (Object.keys(change).length) rtnl().setLink(link.index, change);
              status = { state: 'applied', link: name, up, ...(want.mtu !== undefined ? { mtu: want.mtu } : {}), ...(originalMtu !== undefined ? { originalMtu } : {}) };
            } catch (e) {
              status = { state: 'error', link: name, error: explain(e, want), ...(originalMtu !== undefined ? { originalMtu } : {}) };
            }
          }
          await ctx.state.put({ namespace: NETWORK_NS, type: LINK_SPEC_STATUS_TYPE, id: name }, status);
        }
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: LINK_SPEC_STATUS_TYPE }, keep);
      }
    },
  };
}
