// test-break: a deliberately broken build, for the tests of upgrade fallback. `npm run build -- --test-break
// WHAT` writes WHAT to this file in the initramfs (never in a release: the build refuses it with a signing
// key of its own). What each value breaks:
//   init-exit            PID 1 exits before the API serves (the kernel panics, panic=-1 reboots)
//   plugin-crash:NAME    the plugin NAME exits at every start (the engine restarts it, with backoff)
import { readFileSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';

export const TEST_BREAK_FILE = '/etc/appliance/test-break';
export const TEST_BREAKS = ['init-exit', 'plugin-crash:NAME'] as const;

export function testBreak(file = TEST_BREAK_FILE): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined;
    throw e;
  }
}

export function testBreakProblem(what: string): string | undefined {
  return what === 'init-exit' || /^plugin-crash:[a-z][a-z0-9-]*$/.test(what) ? undefined
    : `--test-break ${what}: one of ${TEST_BREAKS.join(', ')}`;
}
