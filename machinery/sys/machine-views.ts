// machine-views: what uptime, free, ps, mount and ss show, read from /proc when asked. `proc` is
// where procfs is (tests point it elsewhere); every reader tolerates a process that exits while
// it looks.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';
import { parseMeminfo } from './meminfo.ts';
import { oomKills } from './oom-kills.ts';
import { parseMounts, type ProcMount } from './mount-table.ts';
import { parseProcNet, type ProcSocket } from './proc-net.ts';
import { parseStat, PF_KTHREAD } from './proc-table.ts';

/** USER_HZ: the unit of /proc's CPU times, 100 on every architecture Linux runs us on. */
const TICKS_PER_SECOND = 100;

export interface OverviewView {
  uptimeSeconds: number; load1: number; load5: number; load15: number; cpus: number; cpuBusyPercent: number;
  memoryTotalKib: number; memoryAvailableKib: number; memoryFreeKib: number; memoryCachedKib: number;
  processes: number;
  /** Ended by the OOM killer since boot; undefined when the kernel does not count them. */
  oomKills?: number;
}

export interface ProcessView {
  pid: number; ppid: number; name: string; state: string; threads: number; rssKib: number; cpuSeconds: number;
  command: string;
}

/** A file of a process that may be gone by now: undefined then. */
function processFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ESRCH')) return undefined;
    throw e;
  }
}

/**
 * What a process is called: its executable's file name, as the kernel named it at exec. Not stat's comm alone: Node
 * 24 names its main thread, and with it the process's comm, "MainThread". A process with no command line (a zombie)
 * keeps its comm.
 */
const executableName = (argv: readonly string[], comm: string) =>
  (argv[0] ? argv[0].slice(argv[0].lastIndexOf('/') + 1) : comm);
const commandLine = (proc: string, pid: number) =>
  (processFile(`${proc}/${pid}/cmdline`) ?? '').split('\0').filter(Boolean);

const pids = (proc: string) => readdirSync(proc).filter((n) => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b);

export function readProcesses(proc = '/proc'): ProcessView[] {
  return pids(proc).flatMap((pid) => {
    const stat = processFile(`${proc}/${pid}/stat`);
    const status = processFile(`${proc}/${pid}/status`);
    if (stat === undefined || status === undefined) return [];
    const s = parseStat(stat);
    if (s.flags & PF_KTHREAD) return [];
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    const argv = commandLine(proc, pid);
    return [{
      pid, ppid: s.ppid, name: executableName(argv, s.comm), state: s.state, threads: field('Threads'),
      rssKib: field('VmRSS'), cpuSeconds: s.cpuTicks / TICKS_PER_SECOND, command: argv.join(' '),
    }];
  });
}

export function readOverview(proc = '/proc'): OverviewView {
  const [up = '0'] = readFileSync(`${proc}/uptime`, 'utf8').split(' ');
  const [l1 = '0', l5 = '0', l15 = '0'] = readFileSync(`${proc}/loadavg`, 'utf8').split(' ');
  const stat = readFileSync(`${proc}/stat`, 'utf8').split('\n');
  // cpu  user nice system idle iowait irq softirq steal ...
  const ticks = (stat[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const m = parseMeminfo(readFileSync(`${proc}/meminfo`, 'utf8'));
  const kills = oomKills(`${proc}/vmstat`);
  return {
    uptimeSeconds: Number(up), load1: Number(l1), load5: Number(l5), load15: Number(l15),
    cpus: stat.filter((l) => /^cpu\d+ /.test(l)).length,
    cpuBusyPercent: total ? Math.round(((total - idle) / total) * 1000) / 10 : 0,
    memoryTotalKib: m.get('MemTotal') ?? 0, memoryAvailableKib: m.get('MemAvailable') ?? 0,
    memoryFreeKib: m.get('MemFree') ?? 0, memoryCachedKib: (m.get('Cached') ?? 0) + (m.get('Buffers') ?? 0),
    processes: readProcesses(proc).length,
    ...(kills === undefined ? {} : { oomKills: kills }),
  };
}

export const readMounts = (proc = '/proc'): ProcMount[] => parseMounts(readFileSync(`${proc}/self/mounts`, 'utf8'));

export interface SocketView extends ProcSocket { pid: number; process: string }

/** Every TCP and UDP socket, with the process that holds it (found through /proc/PID/fd); listening first. */
export function readSockets(proc = '/proc'): SocketView[] {
  const rows = ['tcp', 'tcp6', 'udp', 'udp6'].flatMap((p) => {
    const text = processFile(`${proc}/net/${p}`);
    return text === undefined ? [] : parseProcNet(text, p); // no IPv6 in this kernel: no tcp6
  });
  const owner = new Map<number, { pid: number; process: string }>();
  for (const pid of pids(proc)) {
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${pid}/fd`);
    } catch (e) {
      if (isErrno(e, 'ENOENT', 'ESRCH', 'EACCES')) continue;
      throw e;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`${proc}/${pid}/fd/${fd}`);
      } catch (e) {
        if (isErrno(e, 'ENOENT', 'ESRCH', 'EACCES')) continue;
        throw e;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode && !owner.has(Number(inode))) {
        const stat = processFile(`${proc}/${pid}/stat`);
        const process = stat ? executableName(commandLine(proc, pid), parseStat(stat).comm) : '';
        owner.set(Number(inode), { pid, process });
      }
    }
  }
  const rank = (s: ProcSocket) => (s.state === 'LISTEN' || s.state === 'UNCONN' ? 0 : 1);
  return rows.map((r) => ({ ...r, ...(owner.get(r.inode) ?? { pid: 0, process: '' }) }))
    .sort((a, b) => rank(a) - rank(b));
}
