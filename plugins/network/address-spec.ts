// address-spec: MergedAddressSpec (id link/address) -> the address on its link through
// rtnetlink -> AddressSpecStatus. The link's up/down is link-spec's business alone; an
// address waits (pending) until its link exists.
import { isIP } from 'node:net';
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import { linksByName } from './link-status.ts';
import { type AddressSpecSpec, type AddressSpecStatusSpec } from './types.ts';
import {
  ADDRESS_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_ADDRESS_SPEC_TYPE, NETWORK_NS,
} from '../../proto/gen/resource-types.ts';

/** "10.0.2.15/24" -> parts, or an error that names the input. */
export function parseCidr(text: string): { ip: string; prefix: number; family: 4 | 6 } {
  const [ip = '', p = '', ...rest] = text.split('/');
  const family = isIP(ip);
  const prefix = Number(p);
  if (rest.length || !family || !/^\d+$/.test(p) || prefix > (family === 4 ? 32 : 128)) {
    throw new Error(`invalid address "${text}" (expected IP/prefix, e.g. 192.0.2.10/24)`);
  }
  return { ip, prefix, family: family as 4 | 6 };
}

export function addressSpecController(rtnl: () => RtnlApi) {
  const describe = (s: AddressSpecSpec): AddressSpecStatusSpec => ({
    address: s.address, link: s.link, layer: layerOf(s),
  });
  return specController<AddressSpecSpec, AddressSpecStatusSpec, Awaited<ReturnType<typeof linksByName>>>({
    name: 'address-spec', namespace: NETWORK_NS,
    specType: MERGED_ADDRESS_SPEC_TYPE, statusType: ADDRESS_SPEC_STATUS_TYPE,
    inputs: [{ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' }],
    observe: (ctx) => linksByName(ctx.state),
    apply(_id, s, prev, links) {
      const link = links.get(s.link);
      if (!link) return { ...describe(s), state: 'pending', error: `link "${s.link}" does not exist (yet)` };
      const { ip, prefix } = parseCidr(s.address);
      if (!prev?.applied || !(link.addresses ?? []).includes(s.address)) {
        try {
          rtnl().address('add', link.index, ip, prefix);
        } catch (e) {
          if (!isErrno(e, 'EEXIST')) throw e;
        }
      }
      return { ...describe(s), state: 'applied', applied: { address: s.address, link: s.link } };
    },
    failed: (_id, s, prev, error) => ({
      ...describe(s), state: 'error', error, ...(prev?.applied ? { applied: prev.applied } : {}),
    }),
    undo(_id, prev, links) {
      if (!prev.applied) return;
      const link = links.get(prev.applied.link);
      if (!link) return; // the link went away and took its addresses along
      const { ip, prefix } = parseCidr(prev.applied.address);
      try {
        rtnl().address('del', link.index, ip, prefix);
      } catch (e) {
        if (!isErrno(e, 'EADDRNOTAVAIL')) throw e;
      }
    },
  });
}
