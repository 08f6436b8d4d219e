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
import { walkTree } from '../../machinery/sys/walk-tree.ts';
import { sha256, sha256File } from '../hash.ts';
import { readOciImage, unpackImage } from '../oci/oci-image.ts';
import { parseOciReference, RegistryClient, RegistryRefused } from '../../machinery/oci/registry.ts';
import { pullToLayout } from '../../machinery/oci/pull-layout.ts';
import {
  addMountPoints, ImageRefused, manifestText, ociFields,
} from '../../machinery/oci/extension-from-image.ts';
import type { DefinedExtension } from './defined-extension.ts';

export { MANIFEST_LABEL } from '../../machinery/oci/extension-from-image.ts';
/** A bump rebuilds every extension (the staging or the packing changed). */
const BUILDER_VERSION = '1';

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
      const text = await stageRoot(e, stage, o, notes);
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

/**
 * Fills `stage` with extension `e`'s root and manifest (from its dir, or its OCI image unpacked); the manifest's text.
 * What the steps shared with the machine refuse is this extension's refusal.
 */
async function stageRoot(
  e: DefinedExtension, stage: string, o: { outDir: string; version: string; progress(message: string): void;
    registryCA?: string }, notes: string[],
): Promise<string> {
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
      const source = e.source as { oci: string } | { registry: string };
      const layout = 'registry' in source ? await pulled(e.name, source.registry, o) : source.oci;
      o.progress(`extension ${e.name}: reading the OCI image ${layout}`);
      const image = await readOciImage(layout);
      const { droppedSetid } = await unpackImage(image, stage);
      if (droppedSetid.length) {
        notes.push(`setuid/setgid bits dropped (an extension runs with no_new_privs): ${droppedSetid.join(', ')}`);
      }
      fields = ociFields(image.config, stage, e.fields, o.version);
    }
    const { text, manifest } = manifestText(e.name, fields, stage);
    notes.push(...addMountPoints(stage, manifest.volumes.map((v) => v.path)));
    writeFileSync(join(stage, MANIFEST_PATH), text);
    return text;
  } catch (err) {
    if (err instanceof ImageRefused) throw new ExtensionRefused(e.name, err.problems);
    throw err;
  }
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
