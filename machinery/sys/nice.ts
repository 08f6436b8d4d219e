// nice: a process's CPU priority. On Linux setpriority(2) with PRIO_PROCESS sets one thread (the id is a thread's),
// and a new thread or child starts with its creator's value: so a child is born at a nice value by spawning it from
// a thread set to that value, and a running process is reniced thread by thread.
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isErrno } from '../../native/errno.ts';

/**
 * Runs `spawn` with the calling thread at `nice` and puts the thread back after: what it forks is born with that
 * value, and so is every thread the child makes. Raising the value back needs CAP_SYS_NICE (PID 1 has it).
 */
export function spawnAtNice<T>(nice: number, spawn: () => T): T {
  const own = getPriority(0);
  setPriority(0, nice);
  // Coming back is tried before anything is spawned: without CAP_SYS_NICE it throws (EACCES) with no child behind.
  setPriority(0, own);
  setPriority(0, nice);
  try {
    return spawn();
  } finally {
    setPriority(0, own);
  }
}

/**
 * Sets every thread of process `pid` to `nice` (a thread that ends meanwhile is skipped). False: the process is
 * gone. Any other failure (EPERM, EACCES: lowering the value without CAP_SYS_NICE) throws.
 */
export function reniceProcess(pid: number, nice: number, procDir = '/proc'): boolean {
  let threads: string[];
  try {
    threads = readdirSync(`${procDir}/${pid}/task`);
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return false;
    throw e;
  }
  for (const tid of threads) {
    try {
      setPriority(Number(tid), nice);
    } catch (e) {
      if (!isErrno(e, 'ESRCH')) throw e;
    }
  }
  return true;
}
