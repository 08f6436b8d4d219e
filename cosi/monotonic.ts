// monotonic: milliseconds since Node began its per-process setup (process.uptime), for durations: read without the
// `performance` global, whose first touch loads node:perf_hooks and what it needs, a cost every process paid at its
// start for a clock (ARCHITECTURE.md, "Start costs taken off"). Its origin is not performance's: that is the
// executable's own start, some milliseconds earlier (25-30 ms in the guest), which is why PID 1's ready line takes
// its process start from performance (machinery/sys/clock.ts) and a plugin's first start step here leaves it out.
export function msSinceStart(): number {
  return process.uptime() * 1000;
}
