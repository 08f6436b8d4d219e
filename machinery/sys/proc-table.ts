// proc-table: what PID 1 needs to know about other processes, read from /proc.
import { isErrno } from '../../native/errno.ts';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo { pid: number; ppid: number; state: string; comm: string; kernelThread: boolean }

/** Parses /proc/<pid>/stat. comm may hold spaces and parentheses, so split at the LAST ')'. */
export function parseStat(
  text: string,
): Omit<ProcInfo, 'kernelThread'> & { flags: number; cpuTicks: number; startTicks: number } {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const pid = Number(text.slice(0, open).trim());
  const fields = text.slice(close + 2).split(' ');
  // fields[0] = state (3rd field), [1] = ppid (4th), [6] = flags (9th), [11] utime and [12] stime (14th, 15th),
  // [19] starttime (22nd: clock ticks after boot)
  return {
    pid, comm: text.slice(open + 1, close), state: fields[0] ?? '?', ppid: Number(fields[1]), flags: Number(fields[6]),
    cpuTicks: Number(fields[11]) + Number(fields[12]), startTicks: Number(fields[19]),
  };
}

/** /proc/PID/stat's flag of a kernel thread. */
export const PF_KTHREAD = 0x00200000;

export function listProcesses(procRoot = '/proc'): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync(procRoot)) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`${procRoot}/${name}/stat`, 'utf8');
    } catch (e) {
      if (isErrno(e, 'ENOENT', 'ESRCH')) continue; // exited while we looked
      throw e;
    }
    const s = parseStat(text);
    out.push({ pid: s.pid, ppid: s.ppid, state: s.state, comm: s.comm, kernelThread: (s.flags & PF_KTHREAD) !== 0 });
  }
  return out;
}

export function zombieChildrenOf(pid: number, procRoot = '/proc'): ProcInfo[] {
  return listProcesses(procRoot).filter((p) => p.ppid === pid && p.state === 'Z');
}
