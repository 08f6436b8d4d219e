// guard: PID 1 must never exit (the kernel panics with "Attempted to kill init").
// Uncaught errors are logged and boot goes on; a fatal error (boot cannot go on)
// counts down, then syncs, unmounts and reboots instead of letting the kernel panic.
import type { Logger } from '../../machinery/log.ts';

export interface Guard {
  /** Boot cannot go on: log why, count down, then run `restart`. */
  fatal(reason: string, cause?: unknown): void;
}

export interface GuardOptions {
  log: Logger;
  /** Read when a fatal error happens, so the kernel command line can still change it. */
  countdownSeconds: () => number;
  /** Syncs, unmounts and reboots; called when the countdown ends. */
  restart: (reason: string) => Promise<void>;
}

function describe(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

export function installGuard(o: GuardOptions): Guard {
  const { log } = o;
  let fatalStarted = false;
  process.on('uncaughtException', (e) => log.error(`uncaught exception (init keeps running): ${describe(e)}`));
  process.on('unhandledRejection', (e) => log.error(`unhandled rejection (init keeps running): ${describe(e)}`));

  const guard: Guard = {
    fatal(reason, cause) {
      if (fatalStarted) {
        log.error(`also fatal: ${reason}`);
        return;
      }
      fatalStarted = true;
      log.error(`FATAL: ${reason}${cause !== undefined ? `: ${describe(cause)}` : ''}`);
      let left = o.countdownSeconds();
      const tick = () => {
        if (left <= 0) {
          void o.restart(`fatal: ${reason}`);
          return;
        }
        log.error(`rebooting in ${left}s`);
        left--;
        setTimeout(tick, 1000);
      };
      tick();
    },
  };

  // Node calls process.exit for some internal errors, and so may a library: in PID 1
  // that would panic the kernel, so it becomes a fatal error with a reboot instead.
  process.exit = ((code?: number) => {
    guard.fatal(`process.exit(${code ?? ''}) called`, new Error('exit called from here'));
    return undefined as never;
  }) as typeof process.exit;
  // An empty event loop would end Node as well; this timer keeps it alive forever.
  setInterval(() => {}, 1 << 30);
  return guard;
}
