// types: the platform plugin's resources, in the `platform` namespace
// (proto/appliance/platform/v1alpha1/platform.proto).
//   ConfigSource      one per place the machine config may come from, in order: what each said
//   UserData          "machine": the config the winning source gave (cloud-init translated); the engine applies it
//   PlatformMetadata  "platform": platform, instance id, hostname, region/zone, instance type, addresses
//   PlatformNetwork   "platform": the network the platform describes -> platform-layer network specs
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { col } from '../sdk/definitions.ts';

export type {
  ConfigSourceSpec, PlatformInterface, PlatformMetadataSpec, PlatformNetworkSpec, PlatformRoute, SourceState,
  UserDataSpec,
} from '../../proto/gen/spec-types.ts';

import {
  CONFIG_SOURCE_TYPE, PLATFORM_ID, PLATFORM_METADATA_TYPE, PLATFORM_NS, USER_DATA_ID, USER_DATA_TYPE,
} from '../../machinery/model/platform-types.ts';

export { CONFIG_SOURCE_TYPE, PLATFORM_ID, PLATFORM_METADATA_TYPE, PLATFORM_NS, USER_DATA_ID, USER_DATA_TYPE };
export const PLATFORM_NETWORK_TYPE = 'PlatformNetworks.platform.appliance.dev';

export const PLATFORM_TYPES: DefinitionInput[] = [
  {
    type: CONFIG_SOURCE_TYPE, defaultNamespace: PLATFORM_NS, aliases: ['sources'],
    protoMessage: MESSAGES.ConfigSourceSpec,
    printColumns: [col('Order', 'order'), col('State', 'state'), col('Attempts', 'attempts'),
      col('Location', 'location'), col('Message', 'message')],
  },
  {
    // User data carries the machine's secrets (its API CA): admins only.
    type: USER_DATA_TYPE, defaultNamespace: PLATFORM_NS, aliases: ['userdata'], protoMessage: MESSAGES.UserDataSpec,
    sensitive: true,
    printColumns: [col('Source', 'source'), col('Format', 'format'), col('Instance', 'instanceId')],
  },
  {
    type: PLATFORM_METADATA_TYPE, defaultNamespace: PLATFORM_NS, aliases: ['platform'],
    protoMessage: MESSAGES.PlatformMetadataSpec,
    printColumns: [col('Platform', 'platform'), col('Instance', 'instanceId'), col('Hostname', 'hostname'),
      col('Zone', 'zone'), col('Detected by', 'detectedBy')],
  },
  {
    type: PLATFORM_NETWORK_TYPE, defaultNamespace: PLATFORM_NS, protoMessage: MESSAGES.PlatformNetworkSpec,
    printColumns: [col('Hostname', 'hostname'), col('Nameservers', 'nameservers')],
  },
];
