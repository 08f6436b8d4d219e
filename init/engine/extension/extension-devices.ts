// extension-devices: the device nodes an extension's manifest asks for (`devices:`, such as a serial port on an
// edge box), given only when its ExtensionSpec grants each (ExtensionSpecs are admins' to write). Only character
// devices, and not those that reach the machine's memory. Each is handed to the extension's uid while it runs (the
// node's owner; put back as it was when it stops) and bound by its launcher into its /dev at the path it asked for.
import { chownSync, realpathSync, statSync } from 'node:fs';
import { isErrno } from '../../../native/errno.ts';
import { ExtensionProblems } from './types.ts';

/** Character devices that would undo the confinement: the machine's memory and I/O ports. */
const DENIED: Record<string, string> = {
  '/dev/mem': 'the machine\'s memory', '/dev/kmem': 'the kernel\'s memory', '/dev/port': 'the machine\'s I/O ports',
};

export interface HeldDevice {
  /** The node on the machine (links followed), and the path the extension asked for. */
  source: string;
  target: string;
  /** Its owner before the extension was given it. */
  was: { uid: number; gid: number };
}

/**
 * The devices `wanted` handed to `uid`: every problem thrown at once, final unless a device is only missing (one
 * plugged in later is tried again).
 */
export function holdDevices(o: { wanted: readonly string[]; granted: readonly string[]; uid: number }): HeldDevice[] {
  const problems: string[] = [];
  let missing = 0;
  const found: { source: string; target: string }[] = [];
  for (const path of o.wanted) {
    if (!o.granted.includes(path)) {
      problems.push(`devices: ${path}: not granted (an admin lists it in the ExtensionSpec's devices)`);
      continue;
    }
    let source: string;
    try {
      source = realpathSync(path);
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) throw e;
      problems.push(`devices: ${path}: the machine has no such device (yet)`);
      missing++;
      continue;
    }
    const st = statSync(source);
    const refused = DENIED[source] ? `${DENIED[source]}: never given to an extension`
      : st.isBlockDevice() ? 'a block device: never given to an extension (it is the whole disk)'
        : !st.isCharacterDevice() ? 'no device node' : undefined;
    if (refused) problems.push(`devices: ${path}${source !== path ? ` (${source})` : ''}: ${refused}`);
    else found.push({ source, target: path });
  }
  if (problems.length) throw new ExtensionProblems(problems, missing < problems.length);
  return found.map((d) => {
    const st = statSync(d.source);
    chownSync(d.source, o.uid, o.uid);
    return { ...d, was: { uid: st.uid, gid: st.gid } };
  });
}

/** Puts each device's owner back as it was; what fails is returned as lines to log (a device gone meanwhile). */
export function releaseDevices(held: readonly HeldDevice[]): string[] {
  const problems: string[] = [];
  for (const d of held) {
    try {
      chownSync(d.source, d.was.uid, d.was.gid);
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) problems.push(`${d.source}: giving it back to ${d.was.uid}: ${(e as Error).message}`);
    }
  }
  return problems;
}
