// lock: one builder at a time for a cache entry (two `npm run build`s, or a build
// and a test run, would otherwise compile into the same directory). mkdir is the
// atomic step; the holder's pid lets a later run take over a lock left by a crash.
import { isErrno } from '../../native/errno.ts';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if (isErrno(e, 'ESRCH')) return false;
    if (isErrno(e, 'EPERM')) return true;
    throw e;
  }
};

export async function withLock<T>(
  dir: string, onWait: (holder: number) => void, fn: () => Promise<T>,
): Promise<T> {
  let told = false;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(`${dir}/pid`, String(process.pid));
      break;
    } catch (e) {
      if (!isErrno(e, 'EEXIST')) throw e;
      let holder = 0;
      try {
        holder = Number(readFileSync(`${dir}/pid`, 'utf8'));
      } catch (e2) {
        if (!isErrno(e2, 'ENOENT')) throw e2; // being written
      }
      if (holder && !alive(holder)) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      if (!told && holder) {
        onWait(holder);
        told = true;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
