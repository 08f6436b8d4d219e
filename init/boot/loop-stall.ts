// loop-stall: PID 1 says when its event loop could not run for a while. Everything the machine does (the API, the
// plugins' socket, shutdown) waits on that one loop, so a client's "no connection within 5 s" is either the network
// or this; the console tells which. Garbage collections long enough to matter are said with their kind.
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import type { Logger } from '../../machinery/log.ts';

export interface LoopStallOptions {
  /** How often the loop is checked. */
  periodMs?: number;
  /** A tick this much later than due is said. */
  stallMs?: number;
  /** A garbage collection this long is said. */
  gcMs?: number;
  /** From this long it is a warning: a client's 5 s connect has given up by then. */
  warnMs?: number;
}

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

/** Starts watching; returns the stop. Timers are unref'd: a watch never keeps the process alive. */
export function watchLoopStalls(log: Logger, o: LoopStallOptions = {}): () => void {
  const periodMs = o.periodMs ?? 500;
  const stallMs = o.stallMs ?? 1000;
  const gcMs = o.gcMs ?? 250;
  const warnMs = o.warnMs ?? 5000;
  // Under emulation (TCG) a second's stall while code compiles is usual: said, but not as a warning.
  const say = (ms: number, what: string) => (ms >= warnMs ? log.warn(what) : log.info(what));
  let due = performance.now() + periodMs;
  // Major faults (pages read back from the system image) tell paging from a busy CPU.
  let faults = process.resourceUsage().majorPageFault;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = lateBy(due, now, stallMs);
    const nowFaults = process.resourceUsage().majorPageFault;
    if (late !== undefined) {
      say(late, `event loop: blocked for ${Math.round(late)} ms (${nowFaults - faults} major page faults meanwhile)`);
    }
    due = now + periodMs;
    faults = nowFaults;
  }, periodMs);
  timer.unref();
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const ms = Math.round(e.duration);
      if (ms >= gcMs) say(ms, `event loop: a ${gcKind(e)} garbage collection took ${ms} ms`);
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  return () => {
    clearInterval(timer);
    gc.disconnect();
  };
}
