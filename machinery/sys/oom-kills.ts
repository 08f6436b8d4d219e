// oom-kills: how many processes the kernel's OOM killer has ended since boot
// (/proc/vmstat oom_kill), so that a SIGKILL nobody sent can be named for what it was.
import { readFileSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';

/** The oom_kill counter of `vmstat` text; undefined when the kernel does not report it. */
export function parseOomKills(vmstat: string): number | undefined {
  const m = /^oom_kill (\d+)$/m.exec(vmstat);
  return m ? Number(m[1]) : undefined;
}

/** The counter now; undefined when /proc/vmstat cannot be read or lacks it (then no guess is made). */
export function oomKills(path = '/proc/vmstat'): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ENOTDIR')) return undefined; // no procfs: nothing to name
    throw e;
  }
  return parseOomKills(text);
}

/** Why a child that ended with `signal` did, when the OOM counter moved while it ran. */
export function killReason(signal: string | null, killsAtStart: number | undefined, killsNow: number | undefined) {
  if (signal !== 'SIGKILL' || killsAtStart === undefined || killsNow === undefined) return '';
  return killsNow > killsAtStart ? ': the kernel\'s OOM killer (the machine ran out of memory)' : '';
}
