// types: the network plugin's resources, in the `network` namespace. The spec of each
// is a message in proto/appliance/net/v1alpha1/net.proto (its fields documented there).
//   LinkStatus      observed links (kernel dump + notifications), id = link name
//   LinkSpec        up/down and MTU of a link, per layer -> MergedLinkSpec -> LinkSpecStatus
//   AddressSpec     an address on a link, per layer -> MergedAddressSpec (id link/address) -> AddressStatus
//   RouteSpec       a route, per layer -> MergedRouteSpec (id destination/metric) -> RouteStatus
//   DhcpSpec        DHCP on a link or not, per layer -> MergedDhcpSpec -> the client and its DhcpLease
//   HostnameSpec    per layer -> MergedHostnameSpec "hostname" -> HostnameStatus
//   ResolverSpec    per layer -> MergedResolverSpec "resolvers" -> ResolverStatus
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import {
  col, declaredAndMerged as twin, ERROR_COLUMN as ERROR, LAYER_COLUMN as LAYER, STATE_COLUMN as STATE,
} from '../sdk/definitions.ts';

export type {
  AddressSpecSpec, AddressStatusSpec, DhcpLeaseSpec, DhcpSpecSpec, DhcpState, HostnameSpecSpec, HostnameStatusSpec,
  LinkSpecSpec, LinkSpecStatusSpec, LinkStatusSpec, ResolverSpecSpec, ResolverStatusSpec, RouteSpecSpec,
  RouteStatusSpec,
} from '../../proto/gen/spec-types.ts';

import {
  ADDRESS_SPEC_TYPE, DHCP_LEASE_TYPE, HOSTNAME_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_ADDRESS_SPEC_TYPE,
  MERGED_DHCP_SPEC_TYPE, NETWORK_NS, ROUTE_STATUS_TYPE,
} from '../../machinery/model/network-names.ts';

export {
  ADDRESS_SPEC_TYPE, DHCP_LEASE_TYPE, HOSTNAME_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_ADDRESS_SPEC_TYPE,
  MERGED_DHCP_SPEC_TYPE, NETWORK_NS, ROUTE_STATUS_TYPE,
};
export const LINK_SPEC_TYPE = 'LinkSpecs.net.appliance.dev';
export const MERGED_LINK_SPEC_TYPE = 'MergedLinkSpecs.net.appliance.dev';
export const LINK_SPEC_STATUS_TYPE = 'LinkSpecStatuses.net.appliance.dev';
export const ADDRESS_STATUS_TYPE = 'AddressStatuses.net.appliance.dev';
export const ROUTE_SPEC_TYPE = 'RouteSpecs.net.appliance.dev';
export const MERGED_ROUTE_SPEC_TYPE = 'MergedRouteSpecs.net.appliance.dev';
export const DHCP_SPEC_TYPE = 'DhcpSpecs.net.appliance.dev';
export const HOSTNAME_SPEC_TYPE = 'HostnameSpecs.net.appliance.dev';
export const MERGED_HOSTNAME_SPEC_TYPE = 'MergedHostnameSpecs.net.appliance.dev';
export const RESOLVER_SPEC_TYPE = 'ResolverSpecs.net.appliance.dev';
export const MERGED_RESOLVER_SPEC_TYPE = 'MergedResolverSpecs.net.appliance.dev';
export const RESOLVER_STATUS_TYPE = 'ResolverStatuses.net.appliance.dev';

export const NETWORK_TYPES: DefinitionInput[] = [
  {
    type: LINK_STATUS_TYPE, defaultNamespace: NETWORK_NS, aliases: ['links'], protoMessage: MESSAGES.LinkStatusSpec,
    printColumns: [
      col('LinkType', 'type'), col('Kind', 'kind'), col('Up', 'up'), col('Oper', 'operState'), col('MTU', 'mtu'),
      col('MAC', 'mac'), col('Addresses', 'addresses'),
    ],
  },
  ...twin({
    defaultNamespace: NETWORK_NS, type: LINK_SPEC_TYPE, protoMessage: MESSAGES.LinkSpecSpec,
    printColumns: [col('Up', 'up'), col('MTU', 'mtu'), LAYER],
  }, MERGED_LINK_SPEC_TYPE),
  {
    type: LINK_SPEC_STATUS_TYPE, defaultNamespace: NETWORK_NS, protoMessage: MESSAGES.LinkSpecStatusSpec,
    printColumns: [col('Link', 'link'), STATE, col('Up', 'up'), col('MTU', 'mtu'), LAYER, ERROR],
  },
  ...twin({
    defaultNamespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE, protoMessage: MESSAGES.AddressSpecSpec,
    printColumns: [col('Address', 'address'), col('Link', 'link'), LAYER],
  }, MERGED_ADDRESS_SPEC_TYPE),
  {
    type: ADDRESS_STATUS_TYPE, defaultNamespace: NETWORK_NS, protoMessage: MESSAGES.AddressStatusSpec,
    printColumns: [col('Address', 'address'), col('Link', 'link'), STATE, LAYER, ERROR],
  },
  ...twin({
    defaultNamespace: NETWORK_NS, type: ROUTE_SPEC_TYPE, protoMessage: MESSAGES.RouteSpecSpec,
    printColumns: [
      col('Destination', 'destination'), col('Gateway', 'gateway'), col('Link', 'link'), col('Metric', 'metric'), LAYER,
    ],
  }, MERGED_ROUTE_SPEC_TYPE),
  {
    type: ROUTE_STATUS_TYPE, defaultNamespace: NETWORK_NS, protoMessage: MESSAGES.RouteStatusSpec,
    printColumns: [
      col('Destination', 'destination'), col('Gateway', 'gateway'), col('Link', 'link'), STATE, LAYER, ERROR,
    ],
  },
  ...twin({
    defaultNamespace: NETWORK_NS, type: DHCP_SPEC_TYPE, protoMessage: MESSAGES.DhcpSpecSpec,
    printColumns: [col('Enabled', 'enabled'), LAYER],
  }, MERGED_DHCP_SPEC_TYPE),
  {
    type: DHCP_LEASE_TYPE, defaultNamespace: NETWORK_NS, aliases: ['leases'], protoMessage: MESSAGES.DhcpLeaseSpec,
    printColumns: [
      STATE, col('Address', 'address'), col('Gateway', 'gateway'), col('Server', 'server'), col('Acquired', 'acquired'),
    ],
  },
  ...twin({
    defaultNamespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, protoMessage: MESSAGES.HostnameSpecSpec,
    printColumns: [col('Hostname', 'hostname'), col('Domain', 'domainname'), LAYER],
  }, MERGED_HOSTNAME_SPEC_TYPE),
  {
    type: HOSTNAME_STATUS_TYPE, defaultNamespace: NETWORK_NS, protoMessage: MESSAGES.HostnameStatusSpec,
    printColumns: [col('FQDN', 'fqdn'), STATE, LAYER, ERROR],
  },
  ...twin({
    defaultNamespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, protoMessage: MESSAGES.ResolverSpecSpec,
    printColumns: [col('Servers', 'servers'), col('Search', 'searchDomains'), LAYER],
  }, MERGED_RESOLVER_SPEC_TYPE),
  {
    type: RESOLVER_STATUS_TYPE, defaultNamespace: NETWORK_NS, protoMessage: MESSAGES.ResolverStatusSpec,
    printColumns: [col('Servers', 'servers'), STATE, LAYER, ERROR],
  },
];
