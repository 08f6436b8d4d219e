// test-orphan-maker: test helpers run as separate processes of our own binary.
// testOrphanMaker starts a grandchild that outlives us, prints `orphan=<pid>`, and
// exits at once, so the grandchild is re-parented to PID 1 (or the nearest subreaper).
import { spawn } from 'node:child_process';

export function testOrphanMaker(args: string[]): number {
  const ms = Number(args[0] ?? '1000');
  const child = spawn(process.execPath, ['test-sleep', String(ms)], { detached: true, stdio: 'ignore' });
  child.unref();
  process.stdout.write(`orphan=${child.pid}\n`);
  return 0;
}

export function testSleep(args: string[]): Promise<number> {
  const ms = Number(args[0] ?? '1000');
  return new Promise((r) => setTimeout(() => r(0), ms));
}

/** Sends a signal to PID 1 from outside it, as an operator's kill(1) would. */
export function testSignalInit(args: string[]): number {
  const sig = args[0] ?? 'SIGTERM';
  if (!/^SIG[A-Z0-9]+$/.test(sig)) {
    process.stderr.write(`test-signal-init: "${sig}" is not a signal name\n`);
    return 2;
  }
  process.kill(1, sig as NodeJS.Signals);
  return 0;
}
