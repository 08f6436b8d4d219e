// process-cost: what each of the machine's processes costs. Memory from /proc/<pid>/smaps_rollup:
// resident size (RSS), its proportional share of pages it shares with others (PSS: the sum
// over processes is what they take together) and the pages no other process maps (private:
// what stopping it would free); CPU time used so far (user + system, /proc/<pid>/stat) and when it started
// (seconds after boot, the same stat line: bench:boot's chart draws each process from there). PID 1
// prints them once the network is configured and every plugin runs, so `npm run bench:boot`
// shows the engine's and each plugin's share of the boot.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../../native/errno.ts';
import { parseStat } from '../../machinery/sys/proc-table.ts';

export interface ProcessCost {
  name: string; pid: number; rssKiB: number; pssKiB: number; privateKiB: number; cpuSeconds: number;
  startedSeconds: number;
}
/** The kernel's USER_HZ: /proc's clock ticks per second (100 on every Linux architecture we build for). */
const USER_HZ = 100;

/** RSS, PSS and private KiB of one smaps_rollup text; undefined when a field is missing. */
export function parseSmapsRollup(
  text: string,
): Omit<ProcessCost, 'name' | 'pid' | 'cpuSeconds' | 'startedSeconds'> | undefined {
  const kib = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const [rss, pss, clean, dirty] = ['Rss', 'Pss', 'Private_Clean', 'Private_Dirty'].map(kib);
  if (rss === undefined || pss === undefined || clean === undefined || dirty === undefined) return undefined;
  return { rssKiB: rss, pssKiB: pss, privateKiB: clean + dirty };
}

/** A process's name for the figures: `init` for PID 1, `plugin/<name>` for `<exe> plugin <name>`. */
export function processName(pid: number, argv: readonly string[]): string {
  if (pid === 1) return 'init';
  if (argv[1] === 'plugin' && argv[2]) return `plugin/${argv[2]}`;
  return argv.map((a) => a.split('/').pop()).join(' ') || `pid ${pid}`;
}

/**
 * Every user process (kernel threads have no command line and no memory of their own), by pid.
 * A process that ends while it is read, or that this one may not inspect (EACCES: on a host, where PID 1 is
 * not ours), is left out; other read errors are thrown.
 */
export function machineProcesses(proc = '/proc'): ProcessCost[] {
  const out: ProcessCost[] = [];
  for (const entry of readdirSync(proc).filter((e) => /^\d+$/.test(e)).sort((a, b) => Number(a) - Number(b))) {
    const pid = Number(entry);
    try {
      const argv = readFileSync(join(proc, entry, 'cmdline'), 'utf8').split('\0').filter(Boolean);
      if (!argv.length) continue;
      const mem = parseSmapsRollup(readFileSync(join(proc, entry, 'smaps_rollup'), 'utf8'));
      const stat = parseStat(readFileSync(join(proc, entry, 'stat'), 'utf8'));
      const cpuSeconds = stat.cpuTicks / USER_HZ;
      const startedSeconds = stat.startTicks / USER_HZ;
      if (mem) out.push({ name: processName(pid, argv), pid, ...mem, cpuSeconds, startedSeconds });
    } catch (e) {
      if (isErrno(e, 'ENOENT', 'ESRCH', 'EACCES')) continue;
      throw e;
    }
  }
  return out;
}
