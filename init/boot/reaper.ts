// reaper: PID 1 must reap orphans that the kernel re-parents to it, but libuv waits
// for the children Node spawned itself (child_process) and needs their exit status.
// So we never wait on -1: on SIGCHLD we list our zombie children in /proc and reap
// only those Node did not spawn. Every spawn goes through `spawn` below so its pid is
// known before any SIGCHLD can report it (spawn returns the pid synchronously).
import { isErrno } from '../../native/errno.ts';
import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import type { ChildExit, Native } from '../../native/index.ts';
import type { Logger } from '../../machinery/log.ts';
import { zombieChildrenOf } from '../../machinery/sys/proc-table.ts';

export interface Reaper {
  /** child_process.spawn, with the pid kept away from the orphan reaper until libuv has waited for it. */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Reaps every zombie child Node did not spawn; returns what it reaped. */
  reapNow(): ChildExit[];
  /** Children spawned through `spawn` that are still running. */
  readonly managed: ReadonlySet<number>;
  /** Called for every orphan reaped. */
  onReap(listener: (exit: ChildExit) => void): void;
  stop(): void;
}

export function createReaper(n: Native, log: Logger, procRoot = '/proc'): Reaper {
  const managed = new Set<number>();
  const listeners: ((e: ChildExit) => void)[] = [];

  const reapNow = (): ChildExit[] => {
    const reaped: ChildExit[] = [];
    for (const z of zombieChildrenOf(process.pid, procRoot)) {
      if (managed.has(z.pid)) continue; // libuv's to wait for
      try {
        const exit = n.waitpid(z.pid);
        if (exit) {
          reaped.push(exit);
          const how = exit.signal !== null ? `signal ${exit.signal}` : `exit ${exit.code}`;
          log.info(`reaped orphan ${z.comm}[${exit.pid}] ${how}`);
        }
      } catch (e) {
        // ECHILD: someone else got it first
        if (!isErrno(e, 'ECHILD')) log.warn(`waitpid ${z.pid}: ${(e as Error).message}`);
      }
    }
    for (const exit of reaped) for (const l of listeners) l(exit);
    return reaped;
  };

  const onSigchld = () => {
    reapNow();
  };
  process.on('SIGCHLD', onSigchld);

  return {
    spawn(command, args, options = {}) {
      const child = nodeSpawn(command, args, options);
      if (child.pid !== undefined) {
        const pid = child.pid;
        managed.add(pid);
        child.once('exit', () => managed.delete(pid));
      }
      return child;
    },
    reapNow,
    managed,
    onReap: (l) => { listeners.push(l); },
    stop: () => { process.off('SIGCHLD', onSigchld); },
  };
}
