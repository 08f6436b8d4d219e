// network: links, addresses and routes through rtnetlink; DHCP; hostname and resolvers.
// Each kind goes config (a layer's specs) -> merge (one spec per id) -> spec (applied,
// with a status) -> status (what the kernel reports).
import { native } from '../../native/index.ts';
import { inHostMode, type Plugin } from '../../machinery/model/plugin.ts';
import { addressMergeController } from './address-merge.ts';
import { addressSpecController } from './address-spec.ts';
import { cmdlineConfigController } from './cmdline-config.ts';
import { dhcpConfigController } from './dhcp-config.ts';
import { dhcpMergeController } from './dhcp-merge.ts';
import { dhcpSpecController } from './dhcp-spec.ts';
import { dhcp6SpecController } from './dhcp6-spec.ts';
import { hostnameMergeController } from './hostname-merge.ts';
import { hostnameSpecController, nativeHostnameKernel } from './hostname-spec.ts';
import { linkConfigController } from './link-config.ts';
import { linkMergeController } from './link-merge.ts';
import { linkModulesController } from './link-modules.ts';
import { linkSpecController } from './link-spec.ts';
import { linkStatusController } from './link-status.ts';
import { resolverMergeController } from './resolver-merge.ts';
import { resolverSpecController } from './resolver-spec.ts';
import { routeMergeController } from './route-merge.ts';
import { routeSpecController } from './route-spec.ts';
import { routeStatusController } from './route-status.ts';
import { routerDnsController } from './router-dns.ts';
import { ruleMergeController } from './rule-merge.ts';
import { ruleSpecController } from './rule-spec.ts';
import { Rtnl } from './rtnetlink/client.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';
import { readFileSync } from 'node:fs';
import { NETWORK_NS } from '../../proto/gen/resource-types.ts';

/** One rtnetlink socket per plugin process, opened on first use (declaring the plugin opens nothing). */
let shared: Rtnl | undefined;
const rtnl = () => (shared ??= new Rtnl(native()));

export const networkPlugin: Plugin = {
  name: 'network',
  startFirst: true,
  description: 'Links (MTU, up/down; bonds, bridges, VLANs), addresses, routes and routing rules through rtnetlink; '
    + 'DHCPv4, DHCPv6 and DNS from router advertisements; the kernel\'s routes; hostname and resolvers by layer; '
    + 'the ip= layer.',
  namespaces: () => ({
    [NETWORK_NS]: 'Network configuration (specs per layer, merged) and what the kernel reports (statuses).',
  }),
  types: () => definitionsServedBy('network'),
  // SYS_ADMIN only for sethostname/setdomainname (the UTS namespace's names).
  capabilities: ['CAP_NET_ADMIN', 'CAP_NET_RAW', 'CAP_NET_BIND_SERVICE', 'CAP_SYS_ADMIN'],
  // CAP_SYS_ADMIN is for these two; the filter refuses the rest of what it allows (mount, ...).
  syscalls: ['sethostname', 'setdomainname'],
  controllers: () => [
    linkStatusController(rtnl),
    // On a host (`serve`) nothing by itself: no links brought up, no DHCP on the host's network.
    linkConfigController({ machineLinks: !inHostMode() }),
    // On a host, no modules loaded, no DHCP on its network and no resolvers from its router advertisements.
    ...(inHostMode() ? [] : [dhcpConfigController(), linkModulesController(), routerDnsController(rtnl)]),
    cmdlineConfigController(),
    linkSpecController(rtnl), addressSpecController(rtnl), routeSpecController(rtnl), ruleSpecController(rtnl),
    dhcpSpecController(native), dhcp6SpecController(), routeStatusController(rtnl),
    hostnameSpecController(
      nativeHostnameKernel(native, '/etc', () => readFileSync('/proc/sys/kernel/domainname', 'utf8').trim()),
    ),
    resolverSpecController(),
  ],
  // Layers in, one spec per id out: on the engine, which has the layers at hand (no watches of them here).
  engineControllers: () => [
    linkMergeController(), addressMergeController(), routeMergeController(), ruleMergeController(),
    dhcpMergeController(), hostnameMergeController(), resolverMergeController(),
  ],
};
