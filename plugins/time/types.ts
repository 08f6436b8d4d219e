// types: the time plugin's resources, in the `time` namespace (proto/appliance/time).
//   TimeServerSpec   NTP servers per layer (users, DHCP option 42, ip=) -> MergedTimeServerSpec "timeservers"
//   TimeStatus       "clock": synced or not, from which server, the last offset and delay,
//                    what the RTC said at boot and when it was last written
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { col, declaredAndMerged, ERROR_COLUMN, LAYER_COLUMN } from '../sdk/definitions.ts';

export type { TimeServerSpecSpec, TimeStatusSpec } from '../../proto/gen/spec-types.ts';

import { TIME_NS, TIME_STATUS_ID, TIME_STATUS_TYPE } from '../../machinery/model/time-names.ts';

export { TIME_NS, TIME_STATUS_ID, TIME_STATUS_TYPE };
export const TIME_SERVER_SPEC_TYPE = 'TimeServerSpecs.time.appliance.dev';
export const MERGED_TIME_SERVER_SPEC_TYPE = 'MergedTimeServerSpecs.time.appliance.dev';

export const TIME_TYPES: DefinitionInput[] = [
  ...declaredAndMerged({
    type: TIME_SERVER_SPEC_TYPE, defaultNamespace: TIME_NS, aliases: ['timeservers', 'ntp'],
    protoMessage: MESSAGES.TimeServerSpecSpec,
    printColumns: [col('Servers', 'servers'), LAYER_COLUMN],
  }, MERGED_TIME_SERVER_SPEC_TYPE),
  {
    type: TIME_STATUS_TYPE, defaultNamespace: TIME_NS, aliases: ['time'], protoMessage: MESSAGES.TimeStatusSpec,
    printColumns: [
      col('Synced', 'synced'), col('Source', 'source'), col('Server', 'server'), col('Offset ms', 'offsetMs'),
      LAYER_COLUMN, ERROR_COLUMN,
    ],
  },
];
