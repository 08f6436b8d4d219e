// network-names: the names of the network plugin's resources the engine watches (its
// API certificate names the machine's addresses and hostname). plugins/network/types.ts
// defines the types with these names; the engine never imports plugins/.
export const NETWORK_NS = 'network';
export const LINK_STATUS_TYPE = 'LinkStatuses.net.appliance.dev';
export const HOSTNAME_STATUS_TYPE = 'HostnameStatuses.net.appliance.dev';
