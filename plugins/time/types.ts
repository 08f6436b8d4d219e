// types: the time plugin's resources, in the `time` namespace.
//   TimeStatus "clock"  synced or not, from which server, the last offset and delay,
//                       what the RTC said at boot and when it was last written
// The servers come from TimeServerSpec in the network namespace (layers: user > dhcp > cmdline).
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';

export const TIME_NS = 'time';
export const TIME_STATUS_TYPE = 'TimeStatuses.time.appliance.dev';

export interface TimeStatusSpec {
  synced: boolean;
  /** Where the clock's time comes from now: a server, the RTC (no server answered yet), or nothing known. */
  source: 'sntp' | 'rtc' | 'none';
  servers: string[];
  server?: string;
  stratum?: number;
  /** The last measured offset (server minus us) and round-trip delay, in ms. */
  offsetMs?: number;
  delayMs?: number;
  /** step: the clock jumped; slew: adjtime absorbs it gradually. */
  correction?: 'step' | 'slew';
  lastSync?: string;
  /** The RTC at plugin start, and whether the kernel set the clock from it at boot (hctosys). */
  rtcAtBoot?: string;
  rtcSetClock?: 'kernel' | 'plugin';
  rtcWritten?: string;
  error?: string;
}

export const TIME_TYPES: DefinitionInput[] = [
  {
    type: TIME_STATUS_TYPE, defaultNamespace: TIME_NS, aliases: ['time'],
    printColumns: [
      { name: 'Synced', jsonPath: '{.synced}' }, { name: 'Source', jsonPath: '{.source}' }, { name: 'Server', jsonPath: '{.server}' },
      { name: 'Offset', jsonPath: '{.offsetMs}' }, { name: 'Error', jsonPath: '{.error}' },
    ],
  },
];
