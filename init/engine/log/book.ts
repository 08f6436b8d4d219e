// log-book: what the engine and each plugin printed, one bounded ring per source, and the kernel's
// own log read from /dev/kmsg when asked (the kernel keeps that ring itself). LogService serves it.
import type { Logger } from '../../../machinery/log.ts';
import type { LineLevel } from '../../../machinery/model/plugin.ts';
import { monotonicSeconds } from '../../../machinery/sys/clock.ts';
import { openKmsg, type KmsgRecord } from '../../../machinery/sys/kmsg.ts';

export const ENGINE_SOURCE = 'engine';
export const KERNEL_SOURCE = 'kernel';
/** Who wrote what and who was refused (api/interceptors.ts): kept here only, not on the console. */
export const AUDIT_SOURCE = 'audit';
/** Each ring's text, by default: a few thousand lines. */
export const DEFAULT_RING_BYTES = 128 * 1024;
/** What a line costs in a ring besides its text (its entry object, string header, slot; bench:logs). */
const LINE_COST = 80;
/** A longer line is cut: one line must not push a whole ring out. */
const LINE_MAX = 4096;
/** Runs a ring remembers the start of: --previous needs the last two. */
const RUNS_KEPT = 4;
/** How often a follower of the kernel log looks for new records (the device cannot be waited on here). */
const KERNEL_POLL_MS = 250;

export interface LogEntry { seq: number; /** Unix milliseconds. */ time: number; level: LineLevel; message: string }

const cost = (message: string) => Buffer.byteLength(message) + LINE_COST;

/**
 * The oldest lines go first once the lines cost more than `capacity` bytes (text and bookkeeping, so
 * that the size bounds the memory); the newest line always stays.
 */
export class LogRing {
  private lines: LogEntry[] = [];
  private start = 0;
  private readonly followers = new Set<(e: LogEntry) => void>();
  /** What the held lines cost: their text and LINE_COST each. */
  bytes = 0;
  seq = 0;
  dropped = 0;
  /** The first seq of each run of the source's process (a plugin restarts), the last few; none: one run. */
  private readonly runs: number[] = [];

  constructor(readonly capacity: number) {}

  get size(): number { return this.lines.length - this.start; }

  append(level: LineLevel, text: string, time = Date.now()): LogEntry {
    const message = text.length > LINE_MAX ? `${text.slice(0, LINE_MAX)}… (${text.length - LINE_MAX} characters cut)`
      : text;
    const e: LogEntry = { seq: ++this.seq, time, level, message };
    this.lines.push(e);
    this.bytes += cost(message);
    while (this.bytes > this.capacity && this.size > 1) {
      this.bytes -= cost(this.lines[this.start++]!.message);
      this.dropped++;
    }
    // Drop the gone lines' slots now and then, not on every line.
    if (this.start > 1024 && this.start * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.start);
      this.start = 0;
    }
    for (const f of this.followers) f(e);
    return e;
  }

  held(): LogEntry[] { return this.lines.slice(this.start); }

  /** The source's process starts (again): the lines after this are a run of their own. */
  startRun(): void {
    this.runs.push(this.seq + 1);
    if (this.runs.length > RUNS_KEPT) this.runs.shift();
  }

  /** The seqs of the run before the current one, [from, to); undefined when there was none. */
  previousRun(): { from: number; to: number } | undefined {
    return this.runs.length < 2 ? undefined : { from: this.runs.at(-2)!, to: this.runs.at(-1)! };
  }

  follow(onLine: (e: LogEntry) => void): () => void {
    this.followers.add(onLine);
    return () => {
      this.followers.delete(onLine);
    };
  }
}

/** A reader's view of one source: the lines held when it opened, then (follow) new ones until closed. */
export interface LogCursor {
  held: LogEntry[];
  /** The seqs of the run before the current one, where the source knows runs (a plugin's ring). */
  previousRun?: { from: number; to: number };
  follow(onLine: (e: LogEntry) => void): void;
  close(): void;
}

export interface LogSourceFacts { name: string; lines: number; bytes: number; capacityBytes: number; dropped: number }

const KERNEL_LEVELS: readonly LineLevel[] = ['error', 'error', 'error', 'error', 'warning', 'info', 'info', 'debug'];

/** A kernel record as a line; `bootTime`: the wall clock at boot, in Unix milliseconds. */
export const kernelEntry = (r: KmsgRecord, bootTime: number): LogEntry => ({
  seq: r.seq + 1, time: Math.round(bootTime + r.usec / 1000), level: KERNEL_LEVELS[r.level] ?? 'info',
  message: r.message,
});

export class LogBook {
  private readonly rings = new Map<string, LogRing>();
  private readonly allFollowers = new Set<(source: string, e: LogEntry) => void>();

  /** `kmsgPath`: where the kernel log is read (none: no kernel source, as for an engine in a test). */
  constructor(private readonly o: { ringBytes?: number; kmsgPath?: string } = {}) {}

  ring(source: string): LogRing {
    let r = this.rings.get(source);
    if (!r) {
      const ring = new LogRing(this.o.ringBytes ?? DEFAULT_RING_BYTES);
      this.rings.set(source, ring);
      ring.follow((e) => {
        for (const f of this.allFollowers) f(source, e);
      });
      r = ring;
    }
    return r;
  }

  /** Every new line of every ring (the kernel's not: it is read when asked), rings made later too. */
  followAll(onLine: (source: string, e: LogEntry) => void): () => void {
    this.allFollowers.add(onLine);
    return () => {
      this.allFollowers.delete(onLine);
    };
  }

  /**
   * Every source, in name order; the kernel's figures say only how many lines it holds now, and cost a
   * read of the whole kernel log (`kernel: false` leaves it out: the metrics scrape does).
   */
  sources(o: { kernel?: boolean } = {}): LogSourceFacts[] {
    const out = [...this.rings].map(([name, r]) => ({
      name, lines: r.size, bytes: r.bytes, capacityBytes: r.capacity, dropped: r.dropped,
    }));
    if (this.o.kmsgPath && o.kernel !== false) {
      const c = this.open(KERNEL_SOURCE)!;
      out.push({
        name: KERNEL_SOURCE, lines: c.held.length, bytes: c.held.reduce((n, e) => n + Buffer.byteLength(e.message), 0),
        capacityBytes: 0, dropped: c.held.length ? c.held[0]!.seq - 1 : 0,
      });
      c.close();
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** undefined: no such source. The kernel log's open errors (EPERM, ENOENT) are thrown as they are. */
  open(source: string): LogCursor | undefined {
    if (source === KERNEL_SOURCE && this.o.kmsgPath) return this.openKernel(this.o.kmsgPath);
    const r = this.rings.get(source);
    if (!r) return undefined;
    let stop = () => {};
    const previousRun = r.previousRun();
    return { held: r.held(), ...(previousRun ? { previousRun } : {}), follow: (f) => {
      stop = r.follow(f);
    }, close: () => stop() };
  }

  private openKernel(path: string): LogCursor {
    const reader = openKmsg(path);
    const bootTime = Date.now() - monotonicSeconds() * 1000;
    const read = () => reader.readAvailable().map((r) => kernelEntry(r, bootTime));
    let timer: NodeJS.Timeout | undefined;
    return {
      held: read(),
      follow(onLine) {
        timer = setInterval(() => {
          for (const e of read()) onLine(e);
        }, KERNEL_POLL_MS);
      },
      close() {
        clearInterval(timer);
        reader.close();
      },
    };
  }

  /**
   * `base`, with every line also kept: in the ring `sourceOf` names for the line's prefix (the
   * `child()` path), without that prefix when it names the source; else in the engine's, prefix kept.
   */
  capture(base: Logger, sourceOf: (prefix: string) => string | undefined): Logger {
    const make = (log: Logger, prefix: string): Logger => {
      const source = sourceOf(prefix);
      const ring = this.ring(source ?? ENGINE_SOURCE);
      const keep = (level: LineLevel, m: string) => ring.append(level, source || !prefix ? m : `${prefix}: ${m}`);
      return {
        info: (m) => {
          log.info(m);
          keep('info', m);
        },
        warn: (m) => {
          log.warn(m);
          keep('warning', m);
        },
        error: (m) => {
          log.error(m);
          keep('error', m);
        },
        child: (p) => make(log.child(p), prefix ? `${prefix}/${p}` : p),
      };
    };
    return make(base, '');
  }
}
