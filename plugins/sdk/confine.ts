// confine: what a plugin process gives up before it talks to anyone, in order: its own
// mount namespace (unless it works on the machine's mounts), then no_new_privs and every
// capability it did not declare, then a seccomp filter refusing the dangerous syscalls its
// job does not need. A mount namespace holds for the thread that enters it only, and Node
// has started threads before our code runs: PID 1 spawns plugins already inside one
// (machinery/sys/mount-namespace.ts); started any other way, the process re-executes itself once
// inside it, so that every thread of the new image is born there.
import { readFileSync } from 'node:fs';
import { CAPABILITY, native, type CapabilityName } from '../../native/index.ts';
import type { Plugin } from '../../machinery/model/plugin.ts';
import { deniedFor, seccompProgram } from '../../machinery/sys/seccomp.ts';
import { selfCommand } from '../../machinery/sys/self-command.ts';
import { commandArgs } from '../../machinery/sys/argv.ts';
import { OWN_MOUNTS_ENV } from '../../machinery/sys/mount-namespace.ts';
import { heldCapabilities } from '../../machinery/sys/capabilities.ts';

/**
 * Confines this process as `p`. Returns only when confined (the first call may re-execute the process),
 * with the declared capabilities this process did not hold to begin with: a container running `serve`
 * may withhold some (no process can keep what it lacks), and the plugin then runs without them.
 */
export function confine(p: Plugin, o: { withoutFilter?: boolean } = {}): { withheld: CapabilityName[] } {
  const n = native();
  if (!p.hostMounts && process.env[OWN_MOUNTS_ENV] !== '1') {
    n.unshareMounts(true);
    process.env[OWN_MOUNTS_ENV] = '1';
    const c = selfCommand(commandArgs());
    n.execProgram('/proc/self/exe', [c.file, ...c.args]);
  }
  const held = heldCapabilities(readFileSync('/proc/self/status', 'utf8'));
  for (const c of p.capabilities) {
    // Typed for built-in plugins; a name that reached here untyped must not become NaN in the syscall.
    if (CAPABILITY[c] === undefined) throw new Error(`${p.name}: unknown capability "${c}"`);
  }
  const withheld = p.capabilities.filter((c) => !held.has(CAPABILITY[c]));
  n.dropCapabilities(p.capabilities.filter((c) => held.has(CAPABILITY[c])).map((c) => CAPABILITY[c]));
  if (!o.withoutFilter) n.seccompFilter(seccompProgram(deniedFor(p.syscalls ?? [])));
  return { withheld };
}
