// extension-launch: what the engine tells an extension's launcher (`init extension-exec`), in
// one environment variable: where the mounted image is, which cgroup to join, and the program to
// become with its arguments, environment and capabilities. The launcher removes it before the
// program runs. Written by the engine from the verified manifest; never from user input directly.
import type { CapabilityName } from '../../native/index.ts';
import { DEVICE_PATH_RE } from './extension-manifest.ts';

export const EXTENSION_LAUNCH_ENV = 'COSI_EXTENSION_LAUNCH';

export interface ExtensionLaunch {
  name: string;
  /** The mounted image: the program's root. */
  image: string;
  /** The cgroup directory to join; undefined: none (a host's test of the launcher alone). */
  cgroup?: string;
  /** The uid and gid it runs as: its own, never 0, so that it is nobody to the machine's processes and files. */
  uid: number;
  /** The engine's plugin socket, bound into the root at PLUGIN_SOCKET_INSIDE. */
  pluginSocket: string;
  executable: string;
  args: string[];
  env: Record<string, string>;
  capabilities: CapabilityName[];
  /** Where the program starts, inside its root (absolute). */
  workingDir: string;
  /** Its volumes: each machine directory `source` bound onto `target`, an image's directory (absolute, resolved). */
  volumes?: { source: string; target: string }[];
  /** Its devices: each machine node `source` bound into its /dev at `target` (a path under /dev). */
  devices?: { source: string; target: string }[];
  /** The machine's directory of its secret files, bound read-only onto /run/secrets. */
  secrets?: string;
}

export const encodeLaunch = (l: ExtensionLaunch) => JSON.stringify(l);

/** The launch the environment holds, or an Error naming what is wrong with it. */
export function decodeLaunch(text: string | undefined): ExtensionLaunch | Error {
  if (!text) return new Error(`${EXTENSION_LAUNCH_ENV} is not set: extensions are started by the engine`);
  let v: Partial<ExtensionLaunch>;
  try {
    v = JSON.parse(text) as Partial<ExtensionLaunch>;
  } catch (e) {
    return new Error(`${EXTENSION_LAUNCH_ENV} is not JSON: ${(e as Error).message}`, { cause: e });
  }
  const strings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');
  if (typeof v.name !== 'string' || typeof v.image !== 'string' || typeof v.pluginSocket !== 'string'
    || typeof v.executable !== 'string' || !strings(v.args) || !strings(v.capabilities)
    || typeof v.workingDir !== 'string' || !v.workingDir.startsWith('/')
    || typeof v.uid !== 'number' || !Number.isInteger(v.uid) || v.uid <= 0
    || typeof v.env !== 'object' || v.env === null || (v.cgroup !== undefined && typeof v.cgroup !== 'string')
    || (v.volumes !== undefined && !(Array.isArray(v.volumes) && v.volumes.every((m) => typeof m?.source === 'string'
      && typeof m.target === 'string' && m.target.startsWith('/'))))
    || (v.secrets !== undefined && typeof v.secrets !== 'string')
    || (v.devices !== undefined && !(Array.isArray(v.devices) && v.devices.every((d) => typeof d?.source === 'string'
      && typeof d.target === 'string' && DEVICE_PATH_RE.test(d.target) && !d.target.split('/').includes('..'))))) {
    return new Error(`${EXTENSION_LAUNCH_ENV} lacks a field or has one of the wrong type: ${text.slice(0, 200)}`);
  }
  return v as ExtensionLaunch;
}
