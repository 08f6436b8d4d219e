// shutdown: the one way the machine ends. Stop every process, sync, unmount, then
// reboot(2) with the command asked for. Idempotent: a second request while one runs
// is logged and ignored.
import { isErrno } from '../../native/errno.ts';
import type { Native, RebootCommand } from '../../native/index.ts';
import type { Logger } from '../../machinery/log.ts';
import { unmountAll } from './mounts.ts';
import { listProcesses } from '../../machinery/sys/proc-table.ts';
import type { Reaper } from './reaper.ts';
import { msSinceStart } from '../../cosi/monotonic.ts';

export type PowerAction = 'poweroff' | 'reboot' | 'halt';

/** How long the shutdown's holders may delay it, or not at all (a PowerRequest's grace_seconds, force). */
export interface ShutdownHoldOptions { graceMs?: number; force?: boolean }

export interface ShutdownOptions {
  native: Native;
  log: Logger;
  reaper: Reaper;
  /** True only for PID 1: signal every process (kill -1), unmount, reboot(2). */
  system: boolean;
  /** How long processes get between SIGTERM and SIGKILL. */
  graceMs?: number;
  /**
   * Runs first: lets holders of the shutdown finish (`hold`: as the request asked), then stops services
   * gracefully (plugins get SIGTERM from their supervisor).
   */
  beforeStop?: (action: PowerAction, reason: string, hold: ShutdownHoldOptions) => Promise<void>;
  /** Called right before reboot(2) (and instead of it when !system). */
  beforeReboot?: (action: PowerAction) => void;
}

const REBOOT_CMD: Record<PowerAction, RebootCommand> = { poweroff: 'poweroff', reboot: 'restart', halt: 'halt' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Shutdown = (action: PowerAction, reason: string, hold?: ShutdownHoldOptions) => Promise<void>;

export function createShutdown(o: ShutdownOptions): Shutdown {
  let running: PowerAction | null = null;
  const log = o.log;

  const userProcesses = () =>
    listProcesses().filter((p) => p.pid !== process.pid && !p.kernelThread && p.state !== 'Z');

  const stopAll = async () => {
    const grace = o.graceMs ?? 5000;
    if (o.system) {
      const before = userProcesses().length;
      if (before === 0) return;
      log.info(`sending SIGTERM to ${before} process(es)`);
      process.kill(-1, 'SIGTERM'); // every process but PID 1 itself
      const deadline = Date.now() + grace;
      while (Date.now() < deadline && userProcesses().length > 0) {
        o.reaper.reapNow();
        await sleep(50);
      }
      const left = userProcesses();
      if (left.length) {
        log.warn(`SIGKILL to ${left.map((p) => `${p.comm}[${p.pid}]`).join(', ')} after ${grace}ms`);
        process.kill(-1, 'SIGKILL');
        await sleep(100);
      }
      o.reaper.reapNow();
    } else {
      for (const pid of o.reaper.managed) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch (e) {
          if (!isErrno(e, 'ESRCH')) throw e;
        } // already gone
      }
    }
  };

  return async (action, reason, hold = {}) => {
    if (running) {
      log.info(`${action} requested (${reason}) while ${running} is in progress; ignored`);
      return;
    }
    running = action;
    const t0 = msSinceStart();
    log.info(`${action} requested: ${reason}`);
    try {
      await o.beforeStop?.(action, reason, hold);
    } catch (e) {
      log.error(`stopping services: ${(e as Error).message}`);
    }
    try {
      await stopAll();
    } catch (e) {
      log.error(`stopping processes: ${(e as Error).message}`);
    }
    o.native.sync();
    if (o.system) {
      const { unmounted, failed } = unmountAll(o.native, log);
      const failures = failed.length ? `, ${failed.length} failed: ${failed.join(', ')}` : '';
      log.info(`unmounted ${unmounted} filesystem(s)${failures}`);
    }
    log.info(`${action} now (shutdown took ${Math.round(msSinceStart() - t0)}ms)`);
    o.beforeReboot?.(action);
    if (!o.system) return;
    try {
      o.native.reboot(REBOOT_CMD[action]);
    } catch (e) {
      log.error(`reboot(${REBOOT_CMD[action]}) failed: ${(e as Error).message}`);
    }
  };
}
