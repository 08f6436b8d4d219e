// link-config: the default layer of LinkSpec. Loopback is up (anything on the machine
// talking to 127.0.0.1 needs it), physical links are up (DHCP runs on them), and so is
// any link an address or route is declared on, and every virtual link a layer declares
// (a bond, bridge or VLAN is made to carry traffic). A higher layer's LinkSpec with
// `up: false` holds a link down all the same.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { type AddressSpecSpec, type LinkSpecSpec, type LinkStatusSpec, type RouteSpecSpec } from './types.ts';
import {
  LINK_SPEC_TYPE, LINK_STATUS_TYPE, MERGED_ADDRESS_SPEC_TYPE, MERGED_LINK_SPEC_TYPE, MERGED_ROUTE_SPEC_TYPE,
  NETWORK_NS,
} from '../../proto/gen/resource-types.ts';

/** A physical link: Ethernet without a virtual driver kind. */
export const isPhysical = (l: LinkStatusSpec) => l.type === 'ether' && !l.kind;

export interface LinkConfigOptions {
  /** Bring up loopback and the physical links (false on a host: only what is declared). */
  machineLinks: boolean;
}

export function linkConfigController(o: LinkConfigOptions): Controller {
  return {
    name: 'link-config',
    inputs: () => [
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: MERGED_ADDRESS_SPEC_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: MERGED_ROUTE_SPEC_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: MERGED_LINK_SPEC_TYPE, kind: 'weak' },
    ],
    outputs: () => [{ type: LINK_SPEC_TYPE, kind: 'shared' }],
    async run(ctx) {
      while (await ctx.next()) {
        const up = new Set<string>();
        if (o.machineLinks) {
          const links = await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE });
          for (const r of links as Resource<LinkStatusSpec>[]) {
            if (r.spec.type === 'loopback' || isPhysical(r.spec)) up.add(r.metadata.id);
          }
        }
        for (const type of [MERGED_ADDRESS_SPEC_TYPE, MERGED_ROUTE_SPEC_TYPE]) {
          const specs = await ctx.state.list({ namespace: NETWORK_NS, type });
          for (const r of specs as Resource<AddressSpecSpec | RouteSpecSpec>[]) {
            if (r.metadata.phase === 'running' && r.spec.link) up.add(r.spec.link);
          }
        }
        const declared = await ctx.state.list({ namespace: NETWORK_NS, type: MERGED_LINK_SPEC_TYPE });
        for (const r of declared as Resource<LinkSpecSpec>[]) {
          if (r.metadata.phase === 'running' && r.spec.kind) up.add(r.metadata.id);
        }
        const keep = new Set<string>();
        for (const link of up) {
          const id = `default/${link}`;
          keep.add(id);
          await ctx.state.put<LinkSpecSpec>(
            { namespace: NETWORK_NS, type: LINK_SPEC_TYPE, id }, { up: true, layer: 'default', link },
          );
        }
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: LINK_SPEC_TYPE }, keep);
      }
    },
  };
}
