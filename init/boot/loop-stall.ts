// loop-stall: PID 1 says when its event loop could not run for a while. Everything the machine does (the API, the
// plugins' socket, shutdown) waits on that one loop, so a client's "no connection within 5 s" is either the network
// or this; the console tells which. Garbage collections long enough to matter are said with their kind. A warning
// is kept for a long stall that came with paging: under a loaded emulator a healthy boot stalls seconds too.
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import type { Logger } from '../../machinery/log.ts';
import { msSinceStart } from '../../cosi/monotonic.ts';

export interface LoopStallOptions {
  /** How often the loop is checked. */
  periodMs?: number;
  /** A tick this much later than due is said. */
  stallMs?: number;
  /** A garbage collection this long is said. */
  gcMs?: number;
  /** From this long it is a warning, when it came with paging: a client's 5 s connect has given up by then. */
  warnMs?: number;
  /** This many major page faults in a stall make it paging (a boot's first reads of its code are a few dozen). */
  pagingFaults?: number;
}

/** A stall this long (clients' 5 s connects have given up) with this many major faults is a warning. */
const WARN_MS = 5000;
const PAGING_FAULTS = 500;

const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** The kind of a `gc` performance entry, as its detail names it. */
export function gcKind(entry: PerformanceEntry): string {
  const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
  return kind === undefined ? 'unknown' : GC_KINDS[kind] ?? `kind ${kind}`;
}

/** How late a tick ran, given when it was due and when it ran; undefined when on time. */
export function lateBy(dueMs: number, ranMs: number, stallMs: number): number | undefined {
  const late = ranMs - dueMs;
  return late >= stallMs ? late : undefined;
}

/**
 * How a stall is said: a warning when it was long and came with paging (the machine is short of memory: the
 * thing to act on), information otherwise (a busy or emulated CPU: under a loaded TCG a boot stalls seconds).
 */
export function stallLevel(
  ms: number, faults: number, warnMs = WARN_MS, pagingFaults = PAGING_FAULTS,
): 'warn' | 'info' {
  return ms >= warnMs && faults >= pagingFaults ? 'warn' : 'info';
}

/** Starts watching; returns the stop. Timers are unref'd: a watch never keeps the process alive. */
export function watchLoopStalls(log: Logger, o: LoopStallOptions = {}): () => void {
  const periodMs = o.periodMs ?? 500;
  const stallMs = o.stallMs ?? 1000;
  const gcMs = o.gcMs ?? 250;
  const { warnMs, pagingFaults } = o;
  let due = msSinceStart() + periodMs;
  // Major faults (pages read back from the system image) tell paging from a busy CPU.
  let faults = process.resourceUsage().majorPageFault;
  const timer = setInterval(() => {
    const now = msSinceStart();
    const late = lateBy(due, now, stallMs);
    const nowFaults = process.resourceUsage().majorPageFault;
    if (late !== undefined) {
      const n = nowFaults - faults;
      const what = `event loop: blocked for ${Math.round(late)} ms (${n} major page faults meanwhile)`;
      if (stallLevel(late, n, warnMs, pagingFaults) === 'warn') log.warn(what);
      else log.info(what);
    }
    due = now + periodMs;
    faults = nowFaults;
  }, periodMs);
  timer.unref();
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const ms = Math.round(e.duration);
      // Information: the loop's line for the same stall says whether it was paging.
      if (ms >= gcMs) log.info(`event loop: a ${gcKind(e)} garbage collection took ${ms} ms`);
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  return () => {
    clearInterval(timer);
    gc.disconnect();
  };
}
