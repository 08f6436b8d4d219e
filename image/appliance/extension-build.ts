// extension-build: an appliance's extension as the squashfs image the machine mounts, with its manifest at
// /manifest.yaml. From a `dir:` (the directory as its root, the definition's fields as its manifest), an `oci:`
// image (its layers applied in memory, its run config completed by the definition's fields and the image's
// label), or a prebuilt `squashfs:` (taken as it is once its manifest reads right). The root is staged in a
// temporary directory and packed by mksquashfs with every file root's and every time zero, so that the same
// inputs give the same bytes; the image takes its name only once whole. A build is skipped when the inputs'
// key is the one its image was made from.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync,
  readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { rootCertificates } from 'node:tls';
import { join, posix } from 'node:path';
import YAML from 'yaml';
import {
  checkManifest, MANIFEST_PATH, parseManifest, type ExtensionManifest,
} from '../../machinery/model/extension-manifest.ts';
import { EXTENSION_MOUNT_POINTS, resolveInImage } from '../../machinery/sys/extension-root.ts';
import { keyed } from '../build-cache.ts';
import { walkTree } from '../walk-tree.ts';
import { sha256, sha256File } from '../hash.ts';
import { readOciImage, type OciImage } from '../oci/oci-image.ts';
import { parseOciReference, RegistryClient, RegistryRefused } from '../../machinery/oci/registry.ts';
import { pullToLayout } from '../../machinery/oci/pull-layout.ts';
import type { RootTree } from '../oci/root-tree.ts';
import type { DefinedExtension } from './defined-extension.ts';

/** The image label that may carry an OCI image's COSI fields (types, outputs, capabilities, ...) as YAML. */
export const MANIFEST_LABEL = 'dev.appliance.manifest';
/** A bump rebuilds every extension (the staging or the packing changed). */
const BUILDER_VERSION = '1';
/** Where a program is looked for when the image's config names it without a path, and sets no PATH. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface BuiltExtension {
  name: string;
  /** The squashfs image. */
  path: string;
  sha256: string;
  bytes: number;
  manifest: ExtensionManifest;
  /** Made now (false: the image of the same inputs was there). */
  built: boolean;
  /** What the build noticed and went on with (setuid bits dropped, files its program cannot read). */
  notes: string[];
}

/** An extension that cannot be built: its name and every reason. */
export class ExtensionRefused extends Error {
  constructor(readonly extension: string, readonly problems: string[]) {
    super(`extension ${extension}: ${problems.join('; ')}`);
    this.name = 'ExtensionRefused';
  }
}

/** What goes into a directory: every entry's path, type, mode and content (or link target), in order. */
export function directoryKey(dir: string): string {
  const parts: string[] = [];
  walkTree(dir, (path, st) => {
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isDirectory()) parts.push(`d ${path} ${mode}`);
    else if (st.isSymbolicLink()) parts.push(`l ${path} ${readlinkSync(join(dir, path))}`);
    else if (st.isFile()) parts.push(`f ${path} ${mode} ${sha256(readFileSync(join(dir, path)))}`);
    else parts.push(`? ${path}`);
  });
  return sha256(parts.join('\n'));
}

/** The key of an extension's inputs: its source's content and the fields the definition gives it. */
async function inputsKey(e: DefinedExtension, version: string): Promise<string> {
  const s = e.source;
  // A registry's image is named by its digest: its content, known without asking the registry.
  const content = 'dir' in s ? directoryKey(s.dir)
    : 'squashfs' in s ? await sha256File(s.squashfs)
    : 'registry' in s ? s.registry
    : statSync(s.oci).isDirectory() ? directoryKey(s.oci) : await sha256File(s.oci);
  return sha256(JSON.stringify({ builder: BUILDER_VERSION, version, source: Object.keys(s)[0], content,
    fields: e.fields }));
}

/**
 * Builds (or finds already built) the image of each extension into `outDir` as NAME.squashfs; `version` is the
 * appliance's (an extension's default). Refusals are ExtensionRefused.
 */
export async function buildExtension(
  e: DefinedExtension,
  o: { outDir: string; version: string; progress(message: string): void; registryCA?: string },
): Promise<BuiltExtension> {
  mkdirSync(o.outDir, { recursive: true });
  const path = join(o.outDir, `${e.name}.squashfs`);
  const manifestFile = join(o.outDir, `${e.name}.manifest.yaml`);
  const notes: string[] = [];
  const key = await inputsKey(e, o.version);
  const built = await keyed(o.outDir, e.name, key, [path, manifestFile], async () => {
    // The old key goes first: a build that fails leaves no stamp claiming the old image is the new one.
    rmSync(join(o.outDir, `${e.name}.key`), { force: true });
    const t0 = performance.now();
    if ('squashfs' in e.source) {
      const text = squashfsManifest(e.name, e.source.squashfs);
      atomicCopy(e.source.squashfs, path);
      writeFileSync(manifestFile, text);
      return;
    }
    const stage = mkdtempSync(join(tmpdir(), `extension-${e.name}-`));
    try {
      let fields: Record<string, unknown>;
      if ('dir' in e.source) {
        if (existsSync(join(e.source.dir, MANIFEST_PATH))) {
          throw new ExtensionRefused(e.name, [`${e.source.dir} holds ${MANIFEST_PATH}: the definition's fields are `
            + 'the manifest of a dir: extension (a prebuilt image with its own manifest is a squashfs:)']);
        }
        cpSync(e.source.dir, stage, { recursive: true, verbatimSymlinks: true, preserveTimestamps: false });
        fields = { version: o.version, ...e.fields };
      } else {
        const layout = 'registry' in e.source ? await pulled(e.name, e.source.registry, o) : e.source.oci;
        o.progress(`extension ${e.name}: reading the OCI image ${layout}`);
        const image = await readOciImage(layout);
        if (image.droppedSetid.length) {
          const paths = image.droppedSetid.join(', ');
          notes.push(`setuid/setgid bits dropped (an extension runs with no_new_privs): ${paths}`);
        }
        writeTree(image.root, stage);
        fields = ociFields(e, image, stage, o.version);
      }
      const { text, manifest } = manifestText(e.name, fields, stage);
      notes.push(...addMountPoints(e.name, stage, manifest.volumes.map((v) => v.path)));
      writeFileSync(join(stage, MANIFEST_PATH), text);
      const unreadable = unreadableFiles(stage);
      if (unreadable.length) {
        notes.push(`${unreadable.length} file(s) its program cannot read (every file is root's in the image; give `
          + `others read permission): ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', ...' : ''}`);
      }
      packSquashfs(stage, path);
      writeFileSync(manifestFile, text);
      o.progress(`extension ${e.name}: packed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  });
  const r = parseManifest(readFileSync(manifestFile, 'utf8'));
  if (!r.manifest) throw new ExtensionRefused(e.name, r.problems);
  const bytes = statSync(path).size;
  return { name: e.name, path, sha256: await sha256File(path), bytes, manifest: r.manifest, built, notes };
}

/** The manifest of a prebuilt image (unsquashfs reads it out), checked, its name the definition's. */
export function squashfsManifest(name: string, image: string): string {
  const r = spawnSync('unsquashfs', ['-cat', image, MANIFEST_PATH], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.error) throw new ExtensionRefused(name, [`unsquashfs: ${r.error.message} (install squashfs-tools)`]);
  if (r.status !== 0) {
    throw new ExtensionRefused(name, [`${image}: no ${MANIFEST_PATH} read from it (not a squashfs image, or none in `
      + `it): ${r.stderr.trim().split('\n').at(-1) ?? ''}`]);
  }
  const m = parseManifest(r.stdout);
  if (!m.manifest) throw new ExtensionRefused(name, m.problems.map((p) => `${image} ${MANIFEST_PATH}: ${p}`));
  if (m.manifest.name !== name) {
    const said = m.manifest.name;
    throw new ExtensionRefused(name, [`${image}: its manifest names it "${said}", the definition "${name}"`]);
  }
  return r.stdout;
}

/** The tree's entries written under `root`, modes as the layers said (ownership is root's in the image). */
export function writeTree(tree: RootTree, root: string): void {
  const paths = [...tree.nodes.keys()].filter((p) => p !== '').sort();
  for (const p of paths) {
    const n = tree.nodes.get(p)!;
    const at = join(root, p);
    if (n.type === 'dir') mkdirSync(at, { recursive: true });
    else if (n.type === 'symlink') symlinkSync(n.target, at);
    else writeFileSync(at, n.data);
  }
  // Modes last, deepest first: a directory without write or search permission is filled first.
  for (const p of paths.reverse()) {
    const n = tree.nodes.get(p)!;
    if (n.type !== 'symlink') chmodSync(join(root, p), n.mode);
  }
}

/**
 * An OCI image's manifest fields: its run config (Entrypoint + Cmd as the program and arguments, a bare program
 * name looked up in the image's PATH, Env, WorkingDir; ready once its first exposed TCP port accepts, or once it
 * runs), then the image's MANIFEST_LABEL, then the definition's fields, each overriding the one before.
 */
function ociFields(e: DefinedExtension, image: OciImage, stage: string, version: string): Record<string, unknown> {
  const c = image.config;
  const argv = [...c.entrypoint, ...c.cmd];
  const fromLabel = c.labels[MANIFEST_LABEL] === undefined ? {} : labelFields(e.name, c.labels[MANIFEST_LABEL]);
  const given = { ...fromLabel, ...e.fields } as Record<string, unknown>;
  const fromImage: Record<string, unknown> = {};
  if (argv.length && given.executable === undefined) {
    const path = (c.env.PATH ?? DEFAULT_PATH).split(':');
    const program = argv[0]!.includes('/') ? posix.resolve(c.workingDir || '/', argv[0]!)
      : path.map((d) => posix.join(d, argv[0]!)).find((p) => resolveInImage(stage, p) !== undefined);
    if (!program) {
      const where = path.join(':');
      throw new ExtensionRefused(e.name, [`the image's entrypoint "${argv[0]}" is in none of its PATH (${where})`]);
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

function labelFields(name: string, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = YAML.parse(text);
  } catch (err) {
    throw new ExtensionRefused(name, [`the image's label ${MANIFEST_LABEL} is not YAML: ${(err as Error).message}`]);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new ExtensionRefused(name, [`the image's label ${MANIFEST_LABEL}: want a mapping of manifest fields`]);
  }
  return v as Record<string, unknown>;
}

/**
 * The registry image `reference` names, pulled by digest into an OCI layout under `outDir` (kept: a second build pulls
 * only what is missing); its directory. What the registry refuses is ExtensionRefused.
 */
async function pulled(
  name: string, reference: string, o: { outDir: string; progress(message: string): void; registryCA?: string },
): Promise<string> {
  const ref = parseOciReference(reference);
  if (typeof ref === 'string') throw new ExtensionRefused(name, [ref]);
  const dir = join(o.outDir, 'pulled', ref.digest.slice('sha256:'.length));
  o.progress(`extension ${name}: pulling ${reference}`);
  const ca = o.registryCA ? [...rootCertificates, readFileSync(o.registryCA, 'utf8')] : undefined;
  try {
    await pullToLayout(new RegistryClient(ref, ca ? { ca } : {}), dir, (m) => o.progress(`extension ${name}: ${m}`));
  } catch (err) {
    if (err instanceof RegistryRefused) throw new ExtensionRefused(name, [err.message]);
    throw err;
  }
  return dir;
}

/** The manifest as YAML, checked, its program one the root holds. */
function manifestText(
  name: string, fields: Record<string, unknown>, stage: string,
): { text: string; manifest: ExtensionManifest } {
  const r = checkManifest({ ...fields, name });
  if (!r.manifest) throw new ExtensionRefused(name, r.problems);
  const exe = resolveInImage(stage, r.manifest.executable);
  const st = exe === undefined ? undefined : statSync(join(stage, exe), { throwIfNoEntry: false });
  if (!st?.isFile() || !(st.mode & 0o111)) {
    throw new ExtensionRefused(name, [`executable ${r.manifest.executable}: no executable file in its root`]);
  }
  const dir = resolveInImage(stage, r.manifest.workingDir);
  if (dir === undefined || !statSync(join(stage, dir)).isDirectory()) {
    throw new ExtensionRefused(name, [`workingDir ${r.manifest.workingDir}: no directory in its root`]);
  }
  return { text: YAML.stringify({ ...fields, name }, { sortMapEntries: true }), manifest: r.manifest };
}

/**
 * The launcher mounts on /proc, /dev, /tmp, /run and each volume's path: made where missing (said), through the
 * root's own links as the program will see them; a file in the way is refused.
 */
function addMountPoints(name: string, stage: string, volumePaths: string[]): string[] {
  const made: string[] = [];
  for (const p of [...EXTENSION_MOUNT_POINTS, ...volumePaths]) {
    const at = resolveInImage(stage, p);
    const st = at === undefined ? undefined : lstatSync(join(stage, at));
    if (st?.isDirectory()) continue;
    if (st) throw new ExtensionRefused(name, [`${p} in its root is no directory: the launcher mounts on it`]);
    const problem = makeDirIn(stage, p);
    if (problem) throw new ExtensionRefused(name, [`${p}: ${problem}`]);
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

/** Regular files others may not read: in the image every file is root's, and the program runs as its own uid. */
function unreadableFiles(stage: string): string[] {
  const out: string[] = [];
  walkTree(stage, (path, st) => {
    if (st.isFile() && !(st.mode & 0o004)) out.push(`/${path}`);
  });
  return out;
}

/** mksquashfs of `root` into `path`, through a temporary name: a failed or cut build leaves no image. */
export function packSquashfs(root: string, path: string): void {
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  chmodSync(root, 0o755); // mkdtemp made it 0700: the image's / is everyone's to read
  try {
    execFileSync('mksquashfs', [root, partial, '-comp', 'zstd', '-all-root', '-noappend', '-quiet', '-no-progress',
      '-mkfs-time', '0', '-all-time', '0', '-no-xattrs'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    rmSync(partial, { force: true });
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    const why = err.code === 'ENOENT' ? 'mksquashfs is not installed (squashfs-tools)'
      : String(err.stderr ?? err.message);
    throw new Error(`packing ${root} into ${path}: ${why.trim()}`, { cause: e });
  }
  renameSync(partial, path);
}

function atomicCopy(from: string, to: string): void {
  copyFileSync(from, `${to}.partial`);
  renameSync(`${to}.partial`, to);
}
