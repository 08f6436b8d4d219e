// network-names: the names of the network plugin's resources the engine watches (its
// API certificate names the machine's addresses and hostname). plugins/network/types.ts
// defines the types with these names; the engine never imports plugins/.
export const NETWORK_NS = 'network';
export const LINK_STATUS_TYPE = 'LinkStatuses.net.appliance.dev';
export const HOSTNAME_STATUS_TYPE = 'HostnameStatuses.net.appliance.dev';
/** Addresses as declared, at any layer: the config milestone wants each one on its link. */
export const ADDRESS_SPEC_TYPE = 'AddressSpecs.net.appliance.dev';
/** The addresses and DHCP the config asks for, merged over their layers: what health expects on the links. */
export const MERGED_ADDRESS_SPEC_TYPE = 'MergedAddressSpecs.net.appliance.dev';
export const MERGED_DHCP_SPEC_TYPE = 'MergedDhcpSpecs.net.appliance.dev';
/** A link's DHCP client and its lease: health wants a bound lease on each DHCP link, not just any address. */
export const DHCP_LEASE_TYPE = 'DhcpLeases.net.appliance.dev';
/** The routes as applied: the network milestone wants the default route a lease brings. */
export const ROUTE_STATUS_TYPE = 'RouteStatuses.net.appliance.dev';
