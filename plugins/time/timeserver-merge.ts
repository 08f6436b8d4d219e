// timeserver-merge: TimeServerSpecs of every layer (users, DHCP option 42, ip=) ->
// MergedTimeServerSpec "timeservers": the highest layer's.
import { mergeController } from '../sdk/merge-controller.ts';
import { type TimeServerSpecSpec } from './types.ts';
import { MERGED_TIME_SERVER_SPEC_TYPE, TIME_NS, TIME_SERVER_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

export const TIME_SERVERS_ID = 'timeservers';

export const timeServerMergeController = () => mergeController<TimeServerSpecSpec>({
  name: 'timeserver-merge', namespace: TIME_NS, inputType: TIME_SERVER_SPEC_TYPE,
  outputType: MERGED_TIME_SERVER_SPEC_TYPE,
  key: () => TIME_SERVERS_ID,
  combine: 'winner',
});
