// clock-floor: the one rule for how far the machine trusts its clock. No clock can be right before this build's
// source was made (BUILD_EPOCH_MS): a dead RTC (1970) or a machine with none is moved forward to that floor at
// boot (as systemd does with its build time), and a time server or RTC reading before it is not used. A clock
// more than CLOCK_AHEAD_YEARS after it is implausible: every certificate `cosictl gen secrets` makes has expired
// by then. Every check of a certificate's validity on the machine words its refusal with clockNote, so a wrong
// clock is named as the cause (machinery/pki/validity.ts); TimeStatus carries the same words.
import { BUILD_EPOCH_MS } from '../version.ts';

/** Longer than any default validity (the API CA: 3650 days): past it, the clock is the likelier fault. */
export const CLOCK_AHEAD_YEARS = 10;
const YEAR_MS = 365.25 * 24 * 3600 * 1000;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** A time to the second, as every clock message words it (2026-11-26T12:00:00Z). */
export const instant = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The time to move the clock to at boot, or undefined when it is at or past the floor (or there is none). */
export function floorFor(nowMs: number, floorMs = BUILD_EPOCH_MS): number | undefined {
  return floorMs > 0 && nowMs < floorMs ? floorMs : undefined;
}

/** The words for a clock reading that cannot be right (before the floor, or implausibly after it), or undefined. */
export function clockProblem(nowMs: number, floorMs = BUILD_EPOCH_MS): string | undefined {
  if (floorMs <= 0) return undefined;
  if (nowMs < floorMs) return `the clock reads ${instant(nowMs)}, before this build was made (${day(floorMs)})`;
  const years = (nowMs - floorMs) / YEAR_MS;
  if (years > CLOCK_AHEAD_YEARS) {
    return `the clock reads ${instant(nowMs)}, ${Math.floor(years)} years after this build was made (${day(floorMs)})`;
  }
  return undefined;
}

/**
 * What to say about the machine's clock beside a time check it failed: its reading, and where it is implausible,
 * why and what corrects it.
 */
export function clockNote(nowMs: number, floorMs = BUILD_EPOCH_MS): string {
  const problem = clockProblem(nowMs, floorMs);
  return problem
    ? `the machine's clock is likely wrong: ${problem}; a TimeServerSpec or a corrected RTC sets it (see TimeStatus)`
    : `by the machine's clock, which reads ${instant(nowMs)}`;
}

/** What the clock at boot says about its source: moved to the floor, with why, or nothing to say. */
export function bootClockNote(rtcAtBootMs: number | undefined, floorMs = BUILD_EPOCH_MS): string | undefined {
  if (floorMs <= 0) return undefined;
  if (rtcAtBootMs === undefined) return `no RTC: the clock started from this build's date (${instant(floorMs)})`;
  if (rtcAtBootMs < floorMs) {
    return `the RTC read ${instant(rtcAtBootMs)} at boot, before this build was made: the clock was moved forward `
      + `to ${instant(floorMs)}`;
  }
  return undefined;
}
