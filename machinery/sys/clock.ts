// clock: guest time since boot without needing /proc. CLOCK_MONOTONIC (what
// process.hrtime reads) counts from boot on Linux, so it equals /proc/uptime in a
// VM that never suspends; it works before /proc is mounted.
export function monotonicSeconds(): number {
  return Number(process.hrtime.bigint()) / 1e9;
}

/** Monotonic time at which this process started (Node's time origin). */
export function processStartSeconds(): number {
  return monotonicSeconds() - performance.now() / 1000;
}
