// system-clock: the clock and RTC operations the time-sync controller needs, backed by
// the native addon (clock_settime, adjtime, RTC ioctls) and sysfs.
import { isErrno } from '../../native/errno.ts';
import { readFileSync } from 'node:fs';
import type { Native } from '../../native/index.ts';

export interface SystemClock {
  now(): number;
  step(toMs: number): void;
  slew(deltaMs: number): void;
  /** The RTC in ms since the epoch, or undefined when the machine has none. */
  readRtc(): number | undefined;
  writeRtc(ms: number): void;
  /** Whether the kernel already set the clock from this RTC at boot (CONFIG_RTC_HCTOSYS). */
  kernelSetFromRtc(): boolean;
}

export function nativeClock(n: () => Native, device = '/dev/rtc0', sysfs = '/sys/class/rtc/rtc0'): SystemClock {
  return {
    now: () => n().clockNow(),
    step: (toMs) => n().clockStep(toMs),
    slew: (deltaMs) => n().clockSlew(deltaMs),
    readRtc: () => {
      try {
        return n().rtcRead(device) * 1000;
      } catch (e) {
        if (isErrno(e, 'ENOENT')) return undefined;
        throw e;
      }
    },
    writeRtc: (ms) => n().rtcWrite(device, Math.round(ms / 1000)),
    kernelSetFromRtc: () => {
      try {
        return readFileSync(`${sysfs}/hctosys`, 'utf8').trim() === '1';
      } catch (e) {
        if (isErrno(e, 'ENOENT')) return false;
        throw e;
      }
    },
  };
}

/** On a host (`serve`): measures, but never moves the host's clock or touches its RTC. */
export function hostModeClock(): SystemClock {
  const refuse = () => {
    throw new Error('host mode: the host clock is left alone');
  };
  return {
    now: () => Date.now(), step: refuse, slew: refuse, readRtc: () => undefined, writeRtc: refuse,
    kernelSetFromRtc: () => false,
  };
}
