// extension-grants: what an extension is given of the machine's as it launches, beside its image: its volumes
// (extension-volumes.ts), the devices its ExtensionSpec grants (extension-devices.ts) and its ExtensionSecret
// (extension-secrets.ts); and their taking back when it stops. Each problem is an ExtensionProblems: final when the
// declaration is what is wrong (a device not granted, a bad secret key, a machine without volumes), not when the
// machine is (a volume it cannot make, a device not plugged in yet).
import type { ExtensionManifest } from '../../../machinery/model/extension-manifest.ts';
import type {
  ExtensionSecretSpec, ExtensionSpec, ExtensionVolume,
} from '../../../machinery/model/runtime-types.ts';
import { resolveInImage } from '../../../machinery/sys/extension-root.ts';
import { holdDevices, releaseDevices, type HeldDevice } from './extension-devices.ts';
import { removeSecretFiles, secretKey, secretProblems, writeSecretFiles } from './extension-secrets.ts';
import { prepareVolumes, type VolumeBacking } from './extension-volumes.ts';
import { ExtensionProblems, type RealMachine } from './types.ts';

/** What an extension was given: the launcher's binds and variables, what its status says, what to give back. */
export interface Grants {
  volumeMounts: { source: string; target: string }[];
  volumes?: ExtensionVolume[];
  /** What holds its volumes (their usage is read from it). */
  backing?: VolumeBacking;
  devices: HeldDevice[];
  /** The machine's directory of its secret files (bound on /run/secrets). */
  secretsDir?: string;
  /** Its secret's variables. */
  env: Record<string, string>;
  /** Which secret it was given ('' none): another restarts it. */
  secretKey: string;
  /** Why a volume note was logged (not persistent, size not enforced), once each. */
  notes: string[];
}

/**
 * Gives extension `name` (running as `uid`, its image mounted on `image`) its volumes, devices and secret. What was
 * given before a problem is taken back before it is thrown.
 */
export function grantMachineParts(o: {
  machine: RealMachine; name: string; uid: number; image: string; manifest: ExtensionManifest; spec: ExtensionSpec;
  secret: ExtensionSecretSpec | undefined;
}): Grants {
  const { machine, name, uid, manifest, secret } = o;
  const g: Grants = { volumeMounts: [], devices: [], env: secret?.env ?? {}, secretKey: secretKey(secret), notes: [] };
  try {
    if (manifest.volumes.length) {
      if (!machine.volumes) throw new ExtensionProblems(['volumes: this machine keeps no volumes']);
      g.backing = machine.volumes.backing();
      const prepared = prepareVolumes({ root: machine.volumes.dir, name, uid, volumes: manifest.volumes,
        backing: g.backing });
      if (prepared.problems.length) throw new ExtensionProblems(prepared.problems, false);
      // Bound where the image's own links lead, as the program would see the path (checked with the image).
      g.volumeMounts = prepared.mounts.map((m) => ({ ...m, target: resolveInImage(o.image, m.target)! }));
      g.volumes = prepared.statuses;
      g.notes = [...new Set(prepared.statuses.map((v) => v.note).filter(Boolean))];
    }
    g.devices = holdDevices({ wanted: manifest.devices, granted: o.spec.devices ?? [], uid });
    const wrong = secret ? secretProblems(secret) : [];
    if (wrong.length) throw new ExtensionProblems(wrong);
    if (secret?.files && Object.keys(secret.files).length && !machine.secretsDir) {
      throw new ExtensionProblems(['secret files: this machine keeps none']);
    }
    const dir = machine.secretsDir ? writeSecretFiles(machine.secretsDir, name, uid, secret?.files) : undefined;
    if (dir) g.secretsDir = dir;
    return g;
  } catch (e) {
    takeBack(machine, name, g);
    throw e;
  }
}

/** Gives back what `g` gave (devices to their owners, secret files removed); what could not be is returned. */
export function takeBack(machine: RealMachine, name: string, g: Pick<Grants, 'devices'>): string[] {
  const problems = releaseDevices(g.devices);
  g.devices = [];
  if (machine.secretsDir) removeSecretFiles(machine.secretsDir, name);
  return problems;
}
