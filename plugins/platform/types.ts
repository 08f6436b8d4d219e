// types: the platform plugin's resources, in the `platform` namespace
// (proto/appliance/platform/v1alpha1/platform.proto).
//   ConfigSource      one per place the machine config may come from, in order: what each said
//   UserData          "machine": the config the winning source gave (cloud-init translated); the engine applies it
//   PlatformMetadata  "platform": platform, instance id, hostname, region/zone, instance type, addresses
//   PlatformNetwork   "platform": the network the platform describes -> platform-layer network specs
// Each type is defined once, by its spec message's (appliance.v1alpha1.resource) option in the .proto:
// proto/gen/resource-types.ts has its constant and definition (this plugin's types() serves them).
export type {
  ConfigSourceSpec, PlatformInterface, PlatformMetadataSpec, PlatformNetworkSpec, PlatformRoute, SourceState,
  UserDataSpec,
} from '../../proto/gen/spec-types.ts';
