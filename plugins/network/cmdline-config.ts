// cmdline-config: the kernel command line's `ip=` -> specs at the cmdline layer: its
// address and gateway (AddressSpec, RouteSpec), hostname, DNS and NTP servers
// (HostnameSpec, ResolverSpec, TimeServerSpec), and whether its device runs DHCP
// (DhcpSpec: off for a static address with autoconf off, on for ip=<dev>:dhcp).
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { type KernelCmdlineSpec } from '../../machinery/model/runtime-types.ts';
import { outputSet } from '../sdk/output-set.ts';
import { parseIpCmdline } from './ip-cmdline-parse.ts';
import { type LinkStatusSpec } from './types.ts';
import {
  ADDRESS_SPEC_TYPE, DHCP_SPEC_TYPE, HOSTNAME_SPEC_TYPE, KERNEL_CMDLINE_TYPE, LINK_STATUS_TYPE, NETWORK_NS,
  RESOLVER_SPEC_TYPE, ROUTE_SPEC_TYPE, RUNTIME_NS, TIME_NS, TIME_SERVER_SPEC_TYPE,
} from '../../proto/gen/resource-types.ts';

const OUTPUTS = [
  [NETWORK_NS, ADDRESS_SPEC_TYPE], [NETWORK_NS, ROUTE_SPEC_TYPE], [NETWORK_NS, HOSTNAME_SPEC_TYPE],
  [NETWORK_NS, RESOLVER_SPEC_TYPE], [NETWORK_NS, DHCP_SPEC_TYPE], [TIME_NS, TIME_SERVER_SPEC_TYPE],
] as const;

export function cmdlineConfigController(): Controller {
  return {
    name: 'cmdline-config',
    inputs: () => [
      { namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => OUTPUTS.map(([, type]) => ({ type, kind: 'shared' as const })),
    async run(ctx) {
      let reported = ''; // the last bad ip= logged, so a broken value is reported once
      while (await ctx.next()) {
        const cmdlineRes = await ctx.state.find({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' });
        const cmdline = cmdlineRes?.spec as KernelCmdlineSpec | undefined;
        const value = cmdline?.params?.ip;
        const out = outputSet(ctx, OUTPUTS);
        const put = (ns: string, type: string, id: string, spec: object) =>
          out.put(ns, type, id, { ...spec, layer: 'cmdline' });
        if (value) {
          try {
            const ip = parseIpCmdline(value);
            // No device named: the first non-loopback link, as the kernel does.
            const links = await ctx.state.list(
              { namespace: NETWORK_NS, type: LINK_STATUS_TYPE },
            ) as Resource<LinkStatusSpec>[];
            const device = ip.device ?? links.find((l) => l.spec.type !== 'loopback')?.metadata.id;
            if (ip.hostname) await put(NETWORK_NS, HOSTNAME_SPEC_TYPE, 'cmdline', { hostname: ip.hostname });
            if (ip.dns.length) await put(NETWORK_NS, RESOLVER_SPEC_TYPE, 'cmdline', { servers: ip.dns });
            if (ip.ntp.length) await put(TIME_NS, TIME_SERVER_SPEC_TYPE, 'cmdline', { servers: ip.ntp });
            if (device) {
              await put(NETWORK_NS, DHCP_SPEC_TYPE, `cmdline/${device}`, { enabled: ip.dhcp, link: device });
              if (ip.address) await put(NETWORK_NS, ADDRESS_SPEC_TYPE, `cmdline/${device}`, {
                address: ip.address, link: device,
              });
              if (ip.address && ip.gateway) await put(NETWORK_NS, ROUTE_SPEC_TYPE, `cmdline/default/${device}`, {
                gateway: ip.gateway, link: device,
              });
            }
          } catch (e) {
            if (reported !== value) {
              ctx.log.error((e as Error).message);
              reported = value;
            }
          }
        }
        await out.cleanup();
      }
    },
  };
}
