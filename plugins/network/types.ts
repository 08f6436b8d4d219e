// types: the network plugin's resources, in the `network` namespace.
//   LinkStatus     observed links (kernel dump + notifications), id = link name
//   LinkSpec       desired up/down and MTU of a link (id = link name); LinkSpecStatus per spec
//   AddressSpec    desired addresses (users, `ip=`, later DHCP); AddressStatus per spec
//   RouteSpec      desired routes; RouteStatus per spec
//   TimeServerSpec NTP servers by layer (user, DHCP option 42, ip=); the time plugin uses the winner
// A spec's status says applied, pending (its link is not there yet) or error (why).
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';

export const NETWORK_NS = 'network';
export const LINK_STATUS_TYPE = 'LinkStatuses.net.appliance.dev';
export const ADDRESS_SPEC_TYPE = 'AddressSpecs.net.appliance.dev';
export const ADDRESS_STATUS_TYPE = 'AddressStatuses.net.appliance.dev';
export const ROUTE_SPEC_TYPE = 'RouteSpecs.net.appliance.dev';
export const ROUTE_STATUS_TYPE = 'RouteStatuses.net.appliance.dev';
export const HOSTNAME_SPEC_TYPE = 'HostnameSpecs.net.appliance.dev';
export const HOSTNAME_STATUS_TYPE = 'HostnameStatuses.net.appliance.dev';
export const RESOLVER_SPEC_TYPE = 'ResolverSpecs.net.appliance.dev';
export const RESOLVER_STATUS_TYPE = 'ResolverStatuses.net.appliance.dev';
export const DHCP_LEASE_TYPE = 'DhcpLeases.net.appliance.dev';
export const LINK_SPEC_TYPE = 'LinkSpecs.net.appliance.dev';
export const LINK_SPEC_STATUS_TYPE = 'LinkSpecStatuses.net.appliance.dev';
export const TIME_SERVER_SPEC_TYPE = 'TimeServerSpecs.net.appliance.dev';

/** Where a spec came from; a higher layer wins where two describe the same thing. */
export type Layer = 'default' | 'cmdline' | 'platform' | 'dhcp' | 'user';

/** addresses: what the kernel has on the link (any source, IPv6 link-local included), as ip/prefix. */
export interface LinkStatusSpec { index: number; type: string; kind?: string; up: boolean; operState: string; mtu?: number; mac?: string; carrier?: boolean; addresses?: string[] }
/** up defaults to true; mtu unset = leave the kernel's. */
export interface LinkSpecSpec { up?: boolean; mtu?: number; layer?: Layer }
export interface AddressSpecSpec { address: string; link: string; layer?: Layer }
export interface RouteSpecSpec { destination?: string; gateway?: string; link: string; metric?: number; layer?: Layer }
export interface HostnameSpecSpec { hostname: string; domainname?: string; layer?: Layer }
export interface HostnameStatusSpec { hostname: string; domainname: string; fqdn: string; source: string; error?: string }
export interface ResolverSpecSpec { servers: string[]; searchDomains?: string[]; layer?: Layer }
export interface ResolverStatusSpec { servers: string[]; searchDomains: string[]; source: string; error?: string }
/** servers: "host", "host:port" or "[v6]:port". */
export interface TimeServerSpecSpec { servers: string[]; layer?: Layer }
export interface DhcpLeaseSpec { state: string; address?: string; gateway?: string; dns?: string[]; server?: string; leaseSeconds?: number; acquired?: string }
export type ApplyState = 'applied' | 'pending' | 'error';
export interface SpecStatus { state: ApplyState; error?: string; link: string }

const layer = { type: 'string' as const, enum: ['default', 'cmdline', 'platform', 'dhcp', 'user'] };

export const NETWORK_TYPES: DefinitionInput[] = [
  {
    type: HOSTNAME_SPEC_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Hostname', jsonPath: '{.hostname}' }, { name: 'Layer', jsonPath: '{.layer}' }],
    schema: { type: 'object', required: ['hostname'], properties: { hostname: { type: 'string', format: 'hostname' }, domainname: { type: 'string', format: 'hostname' }, layer } },
  },
  { type: HOSTNAME_STATUS_TYPE, defaultNamespace: NETWORK_NS, printColumns: [{ name: 'FQDN', jsonPath: '{.fqdn}' }, { name: 'Source', jsonPath: '{.source}' }, { name: 'Error', jsonPath: '{.error}' }] },
  {
    type: RESOLVER_SPEC_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Servers', jsonPath: '{.servers}' }, { name: 'Layer', jsonPath: '{.layer}' }],
    schema: { type: 'object', required: ['servers'], properties: { servers: { type: 'array', maxItems: 3, items: { type: 'string', format: 'ip' } }, searchDomains: { type: 'array', maxItems: 6, items: { type: 'string', format: 'hostname' } }, layer } },
  },
  {
    type: TIME_SERVER_SPEC_TYPE, defaultNamespace: NETWORK_NS, aliases: ['timeservers', 'ntp'],
    printColumns: [{ name: 'Servers', jsonPath: '{.servers}' }, { name: 'Layer', jsonPath: '{.layer}' }],
    schema: { type: 'object', required: ['servers'], properties: { servers: { type: 'array', maxItems: 8, items: { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[0-9A-Fa-f:]+:[0-9A-Fa-f:]*|[A-Za-z0-9.-]{1,253})(:[0-9]{1,5})?$' } }, layer } },
  },
  { type: RESOLVER_STATUS_TYPE, defaultNamespace: NETWORK_NS, printColumns: [{ name: 'Servers', jsonPath: '{.servers}' }, { name: 'Source', jsonPath: '{.source}' }] },
  {
    type: DHCP_LEASE_TYPE, defaultNamespace: NETWORK_NS, aliases: ['leases'],
    printColumns: [{ name: 'State', jsonPath: '{.state}' }, { name: 'Address', jsonPath: '{.address}' }, { name: 'Server', jsonPath: '{.server}' }],
  },
  {
    type: LINK_STATUS_TYPE, defaultNamespace: NETWORK_NS, aliases: ['links'],
    printColumns: [{ name: 'Type', jsonPath: '{.type}' }, { name: 'Up', jsonPath: '{.up}' }, { name: 'Oper', jsonPath: '{.operState}' }, { name: 'MTU', jsonPath: '{.mtu}' }, { name: 'MAC', jsonPath: '{.mac}' }],
  },
  {
    type: LINK_SPEC_TYPE, defaultNamespace: NETWORK_NS, aliases: ['linkspec'],
    printColumns: [{ name: 'Up', jsonPath: '{.up}' }, { name: 'MTU', jsonPath: '{.mtu}' }, { name: 'Layer', jsonPath: '{.layer}' }],
    schema: { type: 'object', properties: { up: { type: 'boolean' }, mtu: { type: 'integer', minimum: 68, maximum: 65535 }, layer } },
  },
  {
    type: LINK_SPEC_STATUS_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Link', jsonPath: '{.link}' }, { name: 'State', jsonPath: '{.state}' }, { name: 'Error', jsonPath: '{.error}' }],
  },
  {
    type: ADDRESS_SPEC_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Address', jsonPath: '{.address}' }, { name: 'Link', jsonPath: '{.link}' }, { name: 'Layer', jsonPath: '{.layer}' }],
    schema: { type: 'object', required: ['address', 'link'], properties: { address: { type: 'string', format: 'cidr' }, link: { type: 'string', pattern: '^[^/\\s]{1,15}$' }, layer } },
  },
  {
    type: ADDRESS_STATUS_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Link', jsonPath: '{.link}' }, { name: 'State', jsonPath: '{.state}' }, { name: 'Error', jsonPath: '{.error}' }],
  },
  {
    type: ROUTE_SPEC_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Destination', jsonPath: '{.destination}' }, { name: 'Gateway', jsonPath: '{.gateway}' }, { name: 'Link', jsonPath: '{.link}' }],
    schema: {
      type: 'object', required: ['link'],
      properties: { destination: { type: 'string', format: 'cidr' }, gateway: { type: 'string', format: 'ip' }, link: { type: 'string', pattern: '^[^/\\s]{1,15}$' }, metric: { type: 'integer', minimum: 0, maximum: 4294967295 }, layer },
    },
  },
  {
    type: ROUTE_STATUS_TYPE, defaultNamespace: NETWORK_NS,
    printColumns: [{ name: 'Link', jsonPath: '{.link}' }, { name: 'State', jsonPath: '{.state}' }, { name: 'Error', jsonPath: '{.error}' }],
  },
];
