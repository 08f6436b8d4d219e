// network: links, addresses and routes through rtnetlink; hostname and resolvers;
// the `ip=` layer; a DHCP client on every physical link without explicit configuration.
import { native } from '../../native/index.ts';
import { inHostMode, type Plugin } from '../sdk/plugin.ts';
import { addressSpecController } from './address-spec.ts';
import { ipCmdlineController } from './ip-cmdline.ts';
import { linkSpecController } from './link-spec.ts';
import { linkStatusController } from './link-status.ts';
import { hostnameController } from './hostname.ts';
import { dhcpClientController } from './dhcp-client.ts';
import { resolversController } from './resolvers.ts';
import { Rtnl } from './rtnetlink/client.ts';
import { routeSpecController } from './route-spec.ts';
import { NETWORK_NS, NETWORK_TYPES } from './types.ts';

/** One rtnetlink socket per plugin process, opened on first use (declaring the plugin opens nothing). */
let shared: Rtnl | undefined;
const rtnl = () => (shared ??= new Rtnl(native()));

export const networkPlugin: Plugin = {
  name: 'network',
  description: 'Links (MTU, up/down), addresses and routes through rtnetlink; DHCP; hostname, resolvers and time servers by layer; the kernel command line ip= layer.',
  namespaces: () => ({ [NETWORK_NS]: 'Network configuration (specs) and what the kernel reports (statuses).' }),
  types: () => NETWORK_TYPES,
  // SYS_ADMIN only for sethostname/setdomainname (the UTS namespace's hostname).
  capabilities: ['CAP_NET_ADMIN', 'CAP_NET_RAW', 'CAP_NET_BIND_SERVICE', 'CAP_SYS_ADMIN'],
  controllers: () => [
    linkStatusController(rtnl), linkSpecController(rtnl), addressSpecController(rtnl), routeSpecController(rtnl), ipCmdlineController(),
    hostnameController(native), resolversController(),
    // On a host (`serve`), no DHCP client: it would broadcast on the host's own network.
    ...(inHostMode() ? [] : [dhcpClientController(native, rtnl)]),
  ],
};
