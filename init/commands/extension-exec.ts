// extension-exec: an extension's launcher (started by the engine, never by hand). It takes a private
// mount namespace, makes the extension's image its root, joins the extension's cgroup (last, so that
// little of this process's own memory is charged there), becomes the extension's own uid keeping only
// the manifest's capabilities (no_new_privs set), installs the plugins' seccomp filter and becomes the
// extension's program (execve): the process id stays, so the engine's supervisor knows the program as
// the plugin it started (the plugin socket, PluginStatus, restarts, logs).
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { native, CAPABILITY } from '../../native/index.ts';
import { enterExtensionRoot, PLUGIN_SOCKET_INSIDE } from '../../machinery/sys/extension-root.ts';
import { deniedFor, seccompProgram } from '../../machinery/sys/seccomp.ts';
import { heldCapabilities } from '../../machinery/sys/capabilities.ts';
import { decodeLaunch, EXTENSION_LAUNCH_ENV } from '../../machinery/model/extension-launch.ts';

/** The launcher's exit code when it could not prepare the program; 127 when the program could not be run. */
const CANNOT_START = 1;
const CANNOT_RUN = 127;

export function extensionExec(): number {
  const launch = decodeLaunch(process.env[EXTENSION_LAUNCH_ENV]);
  if (launch instanceof Error) {
    process.stderr.write(`ERROR extension-exec: ${launch.message}\n`);
    return CANNOT_START;
  }
  const n = native();
  const step = (what: string, f: () => void): boolean => {
    try {
      f();
      return true;
    } catch (e) {
      process.stderr.write(`ERROR extension ${launch.name}: ${what}: ${(e as Error).message}\n`);
      return false;
    }
  };
  const held = heldCapabilities(readFileSync('/proc/self/status', 'utf8'));
  const lacking = launch.capabilities.filter((c) => CAPABILITY[c] === undefined || !held.has(CAPABILITY[c]));
  if (lacking.length) {
    process.stderr.write(`ERROR extension ${launch.name}: cannot keep ${lacking.join(', ')}: not held\n`);
    return CANNOT_START;
  }
  // Opened while the machine's /sys is in sight; written once inside.
  let group: number | undefined;
  if (launch.cgroup && !step(`opening ${launch.cgroup}`, () => {
    group = openSync(join(launch.cgroup!, 'cgroup.procs'), 'w');
  })) return CANNOT_START;
  const ok = step('a mount namespace of its own', () => n.unshareMounts(false))
    && step(`making ${launch.image} its root`, () => enterExtensionRoot(n, launch))
    && step(`entering ${launch.workingDir}`, () => process.chdir(launch.workingDir))
    && (group === undefined || step(`joining ${launch.cgroup}`, () => {
      writeSync(group!, String(process.pid));
      closeSync(group!);
    }))
    && step(`becoming uid ${launch.uid}`, () => n.becomeUser(launch.uid, launch.uid,
      launch.capabilities.map((c) => CAPABILITY[c])))
    && step('the seccomp filter', () => n.seccompFilter(seccompProgram(deniedFor([]))));
  if (!ok) return CANNOT_START;
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin', ...launch.env, COSI_PLUGIN_SOCKET: PLUGIN_SOCKET_INSIDE,
    COSI_PLUGIN_NAME: launch.name,
  };
  step(`running ${launch.executable}`, () => n.execProgram(launch.executable, [launch.executable, ...launch.args],
    Object.entries(env).map(([k, v]) => `${k}=${v}`)));
  return CANNOT_RUN;
}
