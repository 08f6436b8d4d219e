// extension-from-image: what makes an unpacked root an extension's: its manifest, from the image's run config, its
// MANIFEST_LABEL and the fields its declarer gives (each overriding the one before), checked against the root (the
// program is there and executable, the working directory is one); and the directories the launcher mounts on, made
// where the root lacks them. Shared by the appliance build (image/appliance/extension-build.ts) and the machine (an
// extension pulled from a registry, init/engine/extension/oci-fetch.ts), so an image becomes the same extension both
// ways. What cannot be made is ImageRefused, every reason named.
import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import YAML from 'yaml';
import { checkManifest, type ExtensionManifest } from '../model/extension-manifest.ts';
import { EXTENSION_MOUNT_POINTS, resolveInImage } from '../sys/extension-root.ts';
import type { ImageRunConfig } from './oci-image.ts';

/** The image label that may carry an OCI image's COSI fields (types, outputs, capabilities, ...) as YAML. */
export const MANIFEST_LABEL = 'dev.appliance.manifest';
/** Where a program is looked for when the image's config names it without a path, and sets no PATH. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** What keeps a root from being an extension's: every reason. */
export class ImageRefused extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'ImageRefused';
  }
}

/**
 * An OCI image's manifest fields: its run config (Entrypoint + Cmd as the program and arguments, a bare program
 * name looked up in the image's PATH, Env, WorkingDir; ready once its first exposed TCP port accepts, or once it
 * runs), then the image's MANIFEST_LABEL, then `fields`, each overriding the one before; `version` unless one of them
 * gives one. `root` is the unpacked image.
 */
export function ociFields(
  config: ImageRunConfig, root: string, fields: Record<string, unknown>, version: string,
): Record<string, unknown> {
  const c = config;
  const argv = [...c.entrypoint, ...c.cmd];
  const fromLabel = c.labels[MANIFEST_LABEL] === undefined ? {} : labelFields(c.labels[MANIFEST_LABEL]);
  const given = { ...fromLabel, ...fields } as Record<string, unknown>;
  const fromImage: Record<string, unknown> = {};
  if (argv.length && given.executable === undefined) {
    const path = (c.env.PATH ?? DEFAULT_PATH).split(':');
    const program = argv[0]!.includes('/') ? posix.resolve(c.workingDir || '/', argv[0]!)
      : path.map((d) => posix.join(d, argv[0]!)).find((p) => resolveInImage(root, p) !== undefined);
    if (!program) {
      throw new ImageRefused([`the image's entrypoint "${argv[0]}" is in none of its PATH (${path.join(':')})`]);
    }
    fromImage.executable = program;
    fromImage.args = argv.slice(1);
  }
  if (Object.keys(c.env).length) fromImage.env = c.env;
  if (c.workingDir) fromImage.workingDir = c.workingDir;
  const tcp = c.exposedPorts.map((p) => /^([0-9]+)(\/tcp)?$/.exec(p)?.[1]).find(Boolean);
  fromImage.ready = tcp ? `tcp:${tcp}` : 'started';
  const env = { ...(fromImage.env as object | undefined), ...(given.env as object | undefined) };
  return { version, ...fromImage, ...given, ...(Object.keys(env).length ? { env } : {}) };
}

function labelFields(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = YAML.parse(text);
  } catch (err) {
    throw new ImageRefused([`the image's label ${MANIFEST_LABEL} is not YAML: ${(err as Error).message}`]);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new ImageRefused([`the image's label ${MANIFEST_LABEL}: want a mapping of manifest fields`]);
  }
  return v as Record<string, unknown>;
}

/** The manifest of extension `name` as YAML, checked, its program and working directory ones `root` holds. */
export function manifestText(
  name: string, fields: Record<string, unknown>, root: string,
): { text: string; manifest: ExtensionManifest } {
  const r = checkManifest({ ...fields, name });
  if (!r.manifest) throw new ImageRefused(r.problems);
  const exe = resolveInImage(root, r.manifest.executable);
  const st = exe === undefined ? undefined : statSync(join(root, exe), { throwIfNoEntry: false });
  if (!st?.isFile() || !(st.mode & 0o111)) {
    throw new ImageRefused([`executable ${r.manifest.executable}: no executable file in its root`]);
  }
  const dir = resolveInImage(root, r.manifest.workingDir);
  if (dir === undefined || !statSync(join(root, dir)).isDirectory()) {
    throw new ImageRefused([`workingDir ${r.manifest.workingDir}: no directory in its root`]);
  }
  return { text: YAML.stringify({ ...fields, name }, { sortMapEntries: true }), manifest: r.manifest };
}

/**
 * The launcher mounts on /proc, /dev, /tmp, /run and each volume's path: made where missing (said), through the
 * root's own links as the program will see them; a file in the way is refused.
 */
export function addMountPoints(root: string, volumePaths: string[]): string[] {
  const made: string[] = [];
  for (const p of [...EXTENSION_MOUNT_POINTS, ...volumePaths]) {
    const at = resolveInImage(root, p);
    const st = at === undefined ? undefined : lstatSync(join(root, at));
    if (st?.isDirectory()) continue;
    if (st) throw new ImageRefused([`${p} in its root is no directory: the launcher mounts on it`]);
    const problem = makeDirIn(root, p);
    if (problem) throw new ImageRefused([`${p}: ${problem}`]);
    made.push(p);
  }
  return made.length ? [`made the mount points ${made.join(', ')}`] : [];
}

/** Makes directory `path` (absolute, inside `root`) and its missing parents, following the root's links; or why not. */
function makeDirIn(root: string, path: string): string | undefined {
  let at = '/';
  for (const part of path.split('/').filter(Boolean)) {
    if (!lstatSync(join(root, at)).isDirectory()) return `${at} is no directory`;
    const next = resolveInImage(root, posix.join(at, part));
    if (next === undefined) {
      // Nothing there, or a link leading nowhere: a link's missing target is not made.
      if (lstatSync(join(root, at, part), { throwIfNoEntry: false })) return `${posix.join(at, part)} leads nowhere`;
      mkdirSync(join(root, at, part), { mode: 0o755 });
      at = posix.join(at, part);
    } else if (!lstatSync(join(root, next)).isDirectory()) return `${posix.join(at, part)} is no directory`;
    else at = next;
  }
  return undefined;
}
