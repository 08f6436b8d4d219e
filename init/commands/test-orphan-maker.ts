// test-orphan-maker: starts a grandchild that outlives us, prints `orphan=<pid>`, and
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
