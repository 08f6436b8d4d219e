// log: PID 1's logger. Every line goes to the console (fd 1, /dev/console) and,
// once /dev is mounted, to /dev/kmsg, so it survives in the kernel ring buffer.
// Writes are synchronous: a line logged just before reboot(2) must not be lost.
import { isErrno } from '../native/errno.ts';
import { openSync, writeSync } from 'node:fs';
import { monotonicSeconds } from './sys/clock.ts';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  /** A logger whose lines carry `<prefix>:` after the process tag (e.g. the boot phase). */
  child(prefix: string): Logger;
}

type Level = 3 | 4 | 6; // kmsg priorities: err, warning, info

interface Sink { console: number | null; kmsg: number | null }

/** Writes all of `text`, retrying EAGAIN (a console fd may be non-blocking). Returns false if the fd is gone. */
function writeAll(fd: number, text: string): boolean {
  const buf = Buffer.from(text);
  let off = 0;
  for (let tries = 0; off < buf.length && tries < 1000; tries++) {
    try {
      off += writeSync(fd, buf, off);
    } catch (e) {
      if (isErrno(e, 'EAGAIN')) continue;
      return false;
    }
  }
  return true;
}

export function createLogger(tag = 'init'): Logger & { attachKmsg(path?: string): void } {
  const sink: Sink = { console: 1, kmsg: null };
  const emit = (level: Level, prefix: string, msg: string) => {
    const word = level === 3 ? 'ERROR ' : level === 4 ? 'WARN ' : '';
    const body = `${prefix ? `${prefix}: ` : ''}${word}${msg}`;
    if (sink.console !== null && !writeAll(sink.console, `[${tag} ${monotonicSeconds().toFixed(3)}] ${body}\n`)) {
      sink.console = null;
    }
    // kmsg records are one write each; the kernel stamps the time itself.
    if (sink.kmsg !== null) {
      for (const line of body.split('\n')) writeAll(sink.kmsg, `<${level}>${tag}: ${line.slice(0, 900)}\n`);
    }
  };
  const make = (prefix: string): Logger => ({
    info: (m) => emit(6, prefix, m),
    warn: (m) => emit(4, prefix, m),
    error: (m) => emit(3, prefix, m),
    child: (p) => make(prefix ? `${prefix}/${p}` : p),
  });
  return Object.assign(make(''), {
    attachKmsg(path = '/dev/kmsg') {
      try {
        sink.kmsg = openSync(path, 'w');
      } catch (e) {
        emit(4, 'log', `cannot open ${path}: ${(e as Error).message}; console only`);
      }
    },
  });
}

/**
 * At most one line per key per window: what any client can make happen over and over (failed TLS
 * handshakes, refused connections) must not flood the console. The first line after the window
 * says how many were left out. Keys are reasons, never addresses, so the table stays small.
 */
export function throttle(windowMs = 60_000, now = () => Date.now()) {
  const seen = new Map<string, { until: number; dropped: number }>();
  return (key: string, print: (leftOut: string) => void): void => {
    const t = now();
    const s = seen.get(key);
    if (s && t < s.until) {
      s.dropped++;
      return;
    }
    const leftOut = s?.dropped ? ` (and ${s.dropped} more like it in ${Math.round(windowMs / 1000)} s, not shown)` : '';
    seen.set(key, { until: t + windowMs, dropped: 0 });
    print(leftOut);
  };
}
