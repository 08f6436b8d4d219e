// test-pause: a step at which the whole-system tests stop the machine to cut its power there (QMP `quit`), instead
// of racing a kill against the console. `appliance.test.pause=STEP[,STEP/ID]` on the kernel command line names the
// steps (an ID narrows a step to one request: upgrade-system-write/cut). Off unless named. At a named step the process
// says so on the console and stops for good: nothing after the step is reached, as when the power goes.
//   config-save          the machine config written to its temporary file and synced, not yet renamed over the old
//   upgrade-slot-write   an upgrade's slot half written: its kernel copied, its initramfs and slot.env not
//   upgrade-system-write an upgrade's image half written to its SYSTEM partition (each 16 MiB), the slot emptied
import { readFileSync, writeSync } from 'node:fs';
import { parseCmdline } from './cmdline.ts';
import { isErrno } from '../../native/errno.ts';

export const TEST_PAUSE_PARAM = 'appliance.test.pause';
export const TEST_PAUSE_LINE = 'APPLIANCE TEST PAUSE';

let named: ReadonlySet<string> | undefined;

function pausesNamed(cmdlineFile: string): ReadonlySet<string> {
  let text = '';
  try {
    text = readFileSync(cmdlineFile, 'utf8');
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw e;
  }
  return new Set((parseCmdline(text).get(TEST_PAUSE_PARAM) ?? '').split(',').filter(Boolean));
}

/** Stops here for good when the command line names `step` (or `step/id`); returns at once otherwise. */
export function testPause(step: string, id?: string, cmdlineFile = '/proc/cmdline'): void {
  named ??= pausesNamed(cmdlineFile);
  const at = id ? `${step}/${id}` : step;
  if (!named.has(step) && !named.has(at)) return;
  // Straight to the console (fd 1 is PID 1's and each plugin's), before the whole process stops.
  writeSync(1, `${TEST_PAUSE_LINE} ${at}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}
