// monotonic: milliseconds since this process started, performance.now()'s clock, read without the `performance`
// global: its first touch loads node:perf_hooks and what it needs, a cost every process paid at its start for a
// clock (ARCHITECTURE.md, "Start costs taken off"). process.uptime counts from the same start, in seconds.
export function msSinceStart(): number {
  return process.uptime() * 1000;
}
