// time: an SNTP client that keeps the clock (and the RTC) right, from TimeServerSpecs.
import { native } from '../../native/index.ts';
import { inHostMode, type Plugin } from '../../machinery/model/plugin.ts';
import { hostModeClock, nativeClock } from './system-clock.ts';
import { timeServerMergeController } from './timeserver-merge.ts';
import { timeSpecController } from './time-spec.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';
import { TIME_NS } from '../../proto/gen/resource-types.ts';

export const timePlugin: Plugin = {
  name: 'time',
  description: 'SNTP client: steps or slews the clock from the TimeServerSpec servers, writes the RTC; TimeStatus.',
  namespaces: () => ({
    [TIME_NS]: 'The clock: the servers to ask, whether it is synced, from where, and by how much it moved.',
  }),
  types: () => definitionsServedBy('time'),
  // clock_settime, adjtime and RTC_SET_TIME all check CAP_SYS_TIME.
  capabilities: ['CAP_SYS_TIME'],
  syscalls: ['clock_settime', 'clock_adjtime', 'adjtimex', 'settimeofday'],
  // On a host (`serve`) it measures only: the host's clock is not ours to set.
  // On a host, no floor either: its clock is not ours, and nothing moved it.
  // Layers in, one spec out: on the engine (Plugin.engineControllers).
  engineControllers: () => [timeServerMergeController()],
  controllers: () => [
    inHostMode() ? timeSpecController(hostModeClock(), { floorMs: 0 }) : timeSpecController(nativeClock(native)),
  ],
};
