// dhcp-config: the default layer of DhcpSpec: DHCPv4 on, and DHCPv6 as the router advertisements
// ask (auto), on every physical link that is not a port of a bond or bridge (the bond or bridge
// carries its traffic). A higher layer turns it
// off for a link (ip= with a static address, a config's DhcpSpec); declaring an address
// does not.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { isPhysical } from './link-config.ts';
import { type DhcpSpecSpec, type LinkStatusSpec } from './types.ts';
import { DHCP_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

const standalonePhysical = (l: LinkStatusSpec) => isPhysical(l) && !l.master;

export function dhcpConfigController(
  eligible: (l: LinkStatusSpec) => boolean = standalonePhysical,
): Controller {
  return {
    name: 'dhcp-config',
    inputs: () => [{ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' }],
    outputs: () => [{ type: DHCP_SPEC_TYPE, kind: 'shared' }],
    async run(ctx) {
      while (await ctx.next()) {
        const keep = new Set<string>();
        const links = await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE });
        for (const r of links as Resource<LinkStatusSpec>[]) {
          if (!eligible(r.spec)) continue;
          const id = `default/${r.metadata.id}`;
          keep.add(id);
          await ctx.state.put<DhcpSpecSpec>(
            { namespace: NETWORK_NS, type: DHCP_SPEC_TYPE, id },
            { enabled: true, ipv6: 'auto', layer: 'default', link: r.metadata.id },
          );
        }
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: DHCP_SPEC_TYPE }, keep);
      }
    },
  };
}
