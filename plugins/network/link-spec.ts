// link-spec: MergedLinkSpec (id = link name) -> the link's MTU and up/down through
// rtnetlink -> LinkSpecStatus. The only controller that brings links up or down.
// Woken by LinkStatus too, so a link changed behind our back is put back. The MTU
// the link had before the first change is kept in the status and written back once
// no layer sets an MTU; a link is left up when its spec goes (taking it down could
// cut the machine off).
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { linksByName } from './link-status.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import { type LinkSpecSpec, type LinkSpecStatusSpec } from './types.ts';
import {
  LINK_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_LINK_SPEC_TYPE, NETWORK_NS,
} from '../../proto/gen/resource-types.ts';

function explain(e: unknown, mtu: number | undefined): string {
  if (isErrno(e, 'EINVAL') && mtu !== undefined) {
    return `the kernel refused MTU ${mtu} (EINVAL: outside what the link allows)`;
  }
  return (e as Error).message;
}

export function linkSpecController(rtnl: () => RtnlApi) {
  const keepOriginal = (prev: LinkSpecStatusSpec | undefined) => (
    prev?.originalMtu !== undefined ? { originalMtu: prev.originalMtu } : {}
  );
  return specController<LinkSpecSpec, LinkSpecStatusSpec, Awaited<ReturnType<typeof linksByName>>>({
    name: 'link-spec', namespace: NETWORK_NS, specType: MERGED_LINK_SPEC_TYPE, statusType: LINK_SPEC_STATUS_TYPE,
    inputs: [{ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' }],
    observe: (ctx) => linksByName(ctx.state),
    apply(name, s, prev, links) {
      const link = links.get(name);
      const base = { link: name, layer: layerOf(s), ...(s.up !== undefined ? { up: s.up } : {}) };
      if (!link) {
        return { ...base, state: 'pending', error: `link "${name}" does not exist (yet)`, ...keepOriginal(prev) };
      }
      // The MTU before our first change; once no layer sets one, it goes back and is forgotten.
      const originalMtu = prev?.originalMtu ?? (s.mtu !== undefined ? link.mtu : undefined);
      const mtu = s.mtu ?? originalMtu;
      const change = {
        ...(s.up !== undefined && link.up !== s.up ? { up: s.up } : {}),
        ...(mtu !== undefined && link.mtu !== mtu ? { mtu } : {}),
      };
      try {
        if (Object.keys(change).length) rtnl().setLink(link.index, change);
      } catch (e) {
        return { ...base, state: 'error', error: explain(e, change.mtu), ...keepOriginal(prev) };
      }
      return { ...base, state: 'applied', ...(s.mtu !== undefined ? { mtu: s.mtu, originalMtu } : {}) };
    },
    failed: (name, s, prev, error) => ({ link: name, layer: layerOf(s), state: 'error', error, ...keepOriginal(prev) }),
    undo(name, prev, links) {
      const link = links.get(name);
      if (link && prev.originalMtu !== undefined && link.mtu !== prev.originalMtu) {
        rtnl().setLink(link.index, { mtu: prev.originalMtu });
      }
    },
  });
}
