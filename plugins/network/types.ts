// types: the network plugin's resources, in the `network` namespace. The spec of each
// is a message in proto/appliance/net/v1alpha1/net.proto (its fields documented there).
//   LinkStatus      observed links (kernel dump + notifications), id = link name
//   LinkSpec        up/down and MTU of a link, per layer -> MergedLinkSpec -> LinkSpecStatus
//   AddressSpec     an address on a link, per layer -> MergedAddressSpec (id link/address) -> AddressSpecStatus
//   RouteSpec       a route, per layer -> MergedRouteSpec (id [table-N/]destination/metric) -> RouteSpecStatus
//   RuleSpec        a routing policy rule, per layer -> MergedRuleSpec (id family/priority/match) -> RuleSpecStatus
//   DhcpSpec        DHCPv4 on a link or not, DHCPv6's mode, per layer -> MergedDhcpSpec -> the clients, their
//                   DhcpLease and Dhcp6Lease
//   KernelRoute     observed routes (any source: specs, the kernel, router advertisements)
//   HostnameSpec    per layer -> MergedHostnameSpec "hostname" -> HostnameSpecStatus
//   ResolverSpec    per layer -> MergedResolverSpec "resolvers" -> ResolverSpecStatus
// Each type is defined once, by its spec message's (appliance.v1alpha1.resource) option in the .proto:
// proto/gen/resource-types.ts has its constant and definition (this plugin's types() serves them).
export type {
  AddressSpecSpec, AddressSpecStatusSpec, Dhcp6LeaseSpec, Dhcp6State, DhcpLeaseSpec, DhcpSpecSpec, DhcpState,
  HostnameSpecSpec, KernelRouteSpec,
  HostnameSpecStatusSpec,
  LinkSpecSpec, LinkSpecStatusSpec, LinkStatusSpec, ResolverSpecSpec, ResolverSpecStatusSpec, RouteSpecSpec,
  RouteSpecStatusSpec, RuleSpecSpec, RuleSpecStatusSpec,
} from '../../proto/gen/spec-types.ts';
