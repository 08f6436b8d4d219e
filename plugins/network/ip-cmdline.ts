// ip-cmdline: the kernel command line's `ip=` -> AddressSpec and RouteSpec at the
// cmdline layer, its hostname, DNS and NTP servers as HostnameSpec, ResolverSpec and
// TimeServerSpec.
// The DHCP forms (ip=dhcp, ip=eth0:dhcp) add no address: a link without one is left to
// the dhcp-client controller, which is what they ask for.
import type { Controller } from '../../init/cosi/controller/contract.ts';
import { KERNEL_CMDLINE_TYPE, RUNTIME_NS, type KernelCmdlineSpec } from '../../init/engine/resource-types.ts';
import { parseIpCmdline } from './ip-cmdline-parse.ts';
import {
  ADDRESS_SPEC_TYPE, HOSTNAME_SPEC_TYPE, LINK_STATUS_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, TIME_SERVER_SPEC_TYPE,
  type AddressSpecSpec, type HostnameSpecSpec, type LinkStatusSpec, type ResolverSpecSpec, type RouteSpecSpec,
} from './types.ts';

export function ipCmdlineController(): Controller {
  return {
    name: 'ip-cmdline',
    inputs: () => [
      { namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => [
      { type: ADDRESS_SPEC_TYPE, kind: 'shared' }, { type: ROUTE_SPEC_TYPE, kind: 'shared' },
      { type: HOSTNAME_SPEC_TYPE, kind: 'shared' }, { type: RESOLVER_SPEC_TYPE, kind: 'shared' },
      { type: TIME_SERVER_SPEC_TYPE, kind: 'shared' },
    ],
    async run(ctx) {
      let reported = ''; // the last bad ip= logged, so a broken value is reported once
      while (await ctx.next()) {
        const cmdline = (await ctx.state.find({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }))?.spec as KernelCmdlineSpec | undefined;
        const value = cmdline?.params.ip;
        const addresses = new Set<string>();
        const routes = new Set<string>();
        const hostnames = new Set<string>();
        const resolvers = new Set<string>();
        const timeServers = new Set<string>();
        if (value) {
          try {
            const ip = parseIpCmdline(value);
            // No device named: the first non-loopback link, as the kernel does.
            const links = await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE });
            const device = ip.device ?? links.find((l) => (l.spec as LinkStatusSpec).type !== 'loopback')?.metadata.id;
            if (ip.hostname) {
              hostnames.add('cmdline');
              await ctx.state.put({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, id: 'cmdline' }, { hostname: ip.hostname!, layer: 'cmdline' });
            }
            if (ip.dns.length) {
              resolvers.add('cmdline');
              await ctx.state.put({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, id: 'cmdline' }, { servers: ip.dns, layer: 'cmdline' });
            }
            if (ip.ntp.length) {
              timeServers.add('cmdline');
              await ctx.state.put({ namespace: NETWORK_NS, type: TIME_SERVER_SPEC_TYPE, id: 'cmdline' }, { servers: ip.ntp, layer: 'cmdline' });
            }
            if (device && ip.address) {
              const id = `cmdline-${device}`;
              addresses.add(id);
              await ctx.state.put({ namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, id }, { address: ip.address!, link: device, layer: 'cmdline' });
              if (ip.gateway) {
                const rid = `cmdline-default-${device}`;
                routes.add(rid);
                const spec: RouteSpecSpec = { gateway: ip.gateway, link: device, layer: 'cmdline' };
                await ctx.state.put({ namespace: NETWORK_NS, type: ROUTE_SPEC_TYPE, id: rid }, spec);
              }
            }
          } catch (e) {
            if (reported !== value) { ctx.log.error((e as Error).message); reported = value; }
          }
        }
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE }, addresses);
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: ROUTE_SPEC_TYPE }, routes);
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE }, hostnames);
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE }, resolvers);
        await ctx.state.cleanup({ namespace: NETWORK_NS, type: TIME_SERVER_SPEC_TYPE }, timeServers);
      }
    },
  };
}
