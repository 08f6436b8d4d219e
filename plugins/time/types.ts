// types: the time plugin's resources, in the `time` namespace (proto/appliance/time).
//   TimeServerSpec   NTP servers per layer (users, DHCP option 42, ip=) -> MergedTimeServerSpec "timeservers"
//   TimeStatus       "clock": synced or not, from which server, the last offset and delay,
//                    what the RTC said at boot and when it was last written
// Each type is defined once, by its spec message's (appliance.v1alpha1.resource) option in the .proto:
// proto/gen/resource-types.ts has its constant and definition (this plugin's types() serves them).
export type { TimeServerSpecSpec, TimeStatusSpec } from '../../proto/gen/spec-types.ts';
