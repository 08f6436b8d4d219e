// oci-fetch: an extension's image pulled from a registry (`source: oci://HOST[:PORT]/REPO@sha256:...`) and made the
// extension `appliance build` would make of it: pulled by digest through the registry client (every blob checked),
// unpacked in bounded memory (machinery/oci/unpack.ts), its manifest made from the image's config and label
// (extension-from-image.ts), and kept as the directory <digest>.oci beside the squashfs images, which the launcher
// binds read-only. The pull and the unpacking happen in `.<digest>.<random>.partial`, which takes its final name
// only once whole (synced first where the machine can sync): nothing half-made is ever mounted, and a second
// declaration of the digest pulls nothing. What the registry or the image refuses is a RefusedImage; the network's
// failures are Errors.
import { randomBytes } from 'node:crypto';
import {
  chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { MANIFEST_PATH } from '../../../machinery/model/extension-manifest.ts';
import {
  addMountPoints, ImageRefused, manifestText, ociFields,
} from '../../../machinery/oci/extension-from-image.ts';
import { OciRefused, readOciLayout, unpackImage } from '../../../machinery/oci/oci-image.ts';
import { pullToLayout } from '../../../machinery/oci/pull-layout.ts';
import {
  parseOciReference, RegistryClient, RegistryRefused, type RegistryAccess,
} from '../../../machinery/oci/registry.ts';
import { DEFAULT_UNPACK_LIMITS, type UnpackLimits } from '../../../machinery/oci/unpack.ts';
import { syncDirectory } from '../../../machinery/sys/atomic-write.ts';
import { walkTree } from '../../../machinery/sys/walk-tree.ts';
import { RefusedImage, type FetchedImage } from './fetch.ts';

/** Where the image pulled by digest sha256:`hex` is kept in `dir`. */
export const ociImagePath = (dir: string, hex: string) => join(dir, `${hex}.oci`);

/** The version an image gets when its label does not give one: its digest, short. */
const versionOf = (labels: Record<string, string>, hex: string) =>
  labels['org.opencontainers.image.version'] ?? `sha256-${hex.slice(0, 12)}`;

export interface OciPull {
  /** The extension's name: its manifest's. */
  name: string;
  source: string;
  /** The digest's hex, as the ExtensionSpec's sha256 says it. */
  sha256: string;
  /** Where images are kept. */
  dir: string;
  access: RegistryAccess;
  /** Flushes what was written to the disk (sync(2)) before the image takes its name; absent: not flushed. */
  sync?: () => Promise<void>;
  limits?: UnpackLimits;
}

/** The image `p.source` names, pulled and made an extension's, or kept from before; an Error says why not. */
export async function pullOciImage(p: OciPull): Promise<FetchedImage | Error> {
  const ref = parseOciReference(p.source);
  if (typeof ref === 'string') return new RefusedImage(ref);
  if (ref.digest !== `sha256:${p.sha256}`) {
    return new RefusedImage(`${p.source}: names ${ref.digest}, its sha256 says ${p.sha256}: they must be one digest`);
  }
  const final = ociImagePath(p.dir, p.sha256);
  const work = join(p.dir, `.${p.sha256}.${randomBytes(4).toString('hex')}.partial`);
  try {
    mkdirSync(p.dir, { recursive: true, mode: 0o700 });
    if (existsSync(final)) {
      const now = new Date();
      utimesSync(final, now, now); // used now: kept another IMAGE_KEEP_MS
      renameManifest(final, p.name);
      return { path: final, bytes: treeBytes(final), reused: true };
    }
    const layout = join(work, 'layout');
    const root = join(work, 'root');
    await pullToLayout(new RegistryClient(ref, p.access), layout);
    const image = readOciLayout(layout);
    const { bytes } = await unpackImage(image, root, p.limits ?? DEFAULT_UNPACK_LIMITS);
    const fields = ociFields(image.config, root, {}, versionOf(image.config.labels, p.sha256));
    const { text, manifest } = manifestText(p.name, fields, root);
    addMountPoints(root, manifest.volumes.map((v) => v.path));
    writeFileSync(join(root, MANIFEST_PATH), text, { mode: 0o644 });
    chmodSync(root, 0o755);
    await p.sync?.();
    renameSync(root, final);
    syncDirectory(p.dir);
    return { path: final, bytes, reused: false };
  } catch (e) {
    const message = (e as Error).message;
    const said = message.startsWith(p.source) ? message : `${p.source}: ${message}`;
    if (e instanceof RegistryRefused || e instanceof OciRefused || e instanceof ImageRefused) {
      return new RefusedImage(said, { cause: e });
    }
    return new Error(said, { cause: e });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The image was made under another extension's name (one digest declared twice): its manifest, ours, renamed (the
 * rest of it is the image's and stays).
 */
function renameManifest(root: string, name: string): void {
  const file = join(root, MANIFEST_PATH);
  const fields = YAML.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (fields.name === name) return;
  writeFileSync(`${file}.partial`, YAML.stringify({ ...fields, name }, { sortMapEntries: true }), { mode: 0o644 });
  renameSync(`${file}.partial`, file);
}

/** What the files of a kept tree hold. */
function treeBytes(root: string): number {
  let bytes = 0;
  walkTree(root, (_path, st) => {
    if (st.isFile()) bytes += st.size;
  });
  return bytes;
}
