// memory-trace: (benchmarks) the machine's used memory every few hundred milliseconds of the boot, one console line
// each, while `appliance.bench.memtrace` is on the kernel command line: bench:boot draws it as its chart's memory
// curve. It stops by itself (a forgotten flag costs a few lines, not a console full of them).
import type { Logger } from '../../machinery/log.ts';
import { usedMemoryKiB } from '../../machinery/sys/meminfo.ts';
import { monotonicSeconds } from '../../machinery/sys/clock.ts';
import { formatMemorySample } from './ready-line.ts';

export const MEMTRACE_PARAM = 'appliance.bench.memtrace';

/** Samples now and every `periodMs` until `forSeconds` of uptime have passed. */
export function startMemoryTrace(log: Logger, periodMs = 250, forSeconds = 40): void {
  const sample = () => {
    const uptime = monotonicSeconds();
    if (uptime > forSeconds) {
      clearInterval(timer);
      return;
    }
    log.info(formatMemorySample({ uptime, usedKiB: usedMemoryKiB() }));
  };
  const timer = setInterval(sample, periodMs);
  timer.unref();
  sample();
}
