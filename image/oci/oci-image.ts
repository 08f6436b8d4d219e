// oci-image: an OCI image as the unit people already have, read from an OCI image layout directory or a
// `docker save` archive: the linux/amd64 image's layers applied in order into a root tree (root-tree.ts) and the run
// settings of its config (Entrypoint, Cmd, Env, WorkingDir, ExposedPorts, User, Labels). Every blob is checked
// against its digest and size, every layer against the config's diff_ids. Refused, with the input and the reason:
// no linux/amd64 image (the platforms present are named), several images and none chosen, media types we do not
// know, compressed layers that do not decompress, and what root-tree.ts refuses.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import * as zlib from 'node:zlib';
import { sha256 } from '../hash.ts';
import { readTar } from './tar-read.ts';
import { RootTree } from './root-tree.ts';

export { LAYER_MEDIA, MEDIA } from '../../machinery/oci/media.ts';
import { LAYER_MEDIA, MEDIA } from '../../machinery/oci/media.ts';

/** What the image's config says about running it. */
export interface ImageRunConfig {
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  workingDir: string;
  /** "8080/tcp", as the config writes them. */
  exposedPorts: string[];
  /** The config's User, recorded: the program runs as the extension's own uid whatever it says. */
  user: string;
  labels: Record<string, string>;
}

export interface OciImage {
  root: RootTree;
  config: ImageRunConfig;
  /** The manifest's digest (an OCI layout), or the config's (a `docker save` archive). */
  digest: string;
  /** Paths whose setuid or setgid bit was dropped. */
  droppedSetid: string[];
}

/** An image refused: the input and every reason. */
export class OciRefused extends Error {
  constructor(readonly input: string, readonly problems: string[]) {
    super(`${input}: not taken as an OCI image: ${problems.join('; ')}`);
    this.name = 'OciRefused';
  }
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size: number;
  platform?: { os?: string; architecture?: string };
  annotations?: Record<string, string>;
}

/**
 * A zstd layer decompressed: by node:zlib where this Node has it (22.15 and later), else by the zstd tool (which
 * `npm run setup` installs): the build may run on an older Node than the one the system ships.
 */
function unzstd(data: Buffer): Buffer {
  const native = (zlib as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
  if (native) return native(data);
  return execFileSync('zstd', ['-dc'], { input: data, maxBuffer: 4 << 30 });
}

/** A blob's digest as OCI writes it. */
const digestOf = (b: Buffer) => `sha256:${sha256(b)}`;
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

function json<T>(b: Buffer, what: string, input: string): T {
  try {
    return JSON.parse(b.toString('utf8')) as T;
  } catch (e) {
    throw new OciRefused(input, [`${what} is not JSON: ${(e as Error).message}`]);
  }
}

/** Reads the image at `input`: a directory holding an OCI layout, or a file made by `docker save`. */
export async function readOciImage(input: string): Promise<OciImage> {
  if (!existsSync(input)) throw new OciRefused(input, ['no such file or directory']);
  return statSync(input).isDirectory() ? readLayout(input) : readDockerArchive(input);
}

async function readLayout(dir: string): Promise<OciImage> {
  const marker = join(dir, 'oci-layout');
  if (!existsSync(marker)) throw new OciRefused(dir, ['no oci-layout file: not an OCI image layout']);
  const blob = (d: Descriptor, what: string): Buffer => {
    if (!DIGEST_RE.test(d.digest)) throw new OciRefused(dir, [`${what}: digest ${d.digest} is not sha256:<64 hex>`]);
    const file = join(dir, 'blobs', 'sha256', d.digest.slice('sha256:'.length));
    if (!existsSync(file)) throw new OciRefused(dir, [`${what}: blob ${d.digest} is missing`]);
    const b = readFileSync(file);
    if (b.length !== d.size) {
      throw new OciRefused(dir, [`${what}: blob ${d.digest} has ${b.length} bytes, not ${d.size}`]);
    }
    if (digestOf(b) !== d.digest) throw new OciRefused(dir, [`${what}: blob ${d.digest} does not match its digest`]);
    return b;
  };
  const index = json<{ manifests?: Descriptor[] }>(readFileSync(join(dir, 'index.json')), 'index.json', dir);
  const manifestDesc = pickManifest(index.manifests ?? [], dir, (d) => json(blob(d, 'index'), 'an index', dir));
  const manifest = json<{ mediaType?: string; config: Descriptor; layers: Descriptor[] }>(
    blob(manifestDesc, 'manifest'), 'the manifest', dir);
  const configType = manifest.config?.mediaType;
  if (configType !== MEDIA.ociConfig && configType !== MEDIA.dockerConfig) {
    throw new OciRefused(dir, [`config media type ${configType} is not known (want ${MEDIA.ociConfig})`]);
  }
  const layers = (manifest.layers ?? []).map((d, i) => {
    const compression = LAYER_MEDIA[d.mediaType ?? ''];
    if (!compression) {
      throw new OciRefused(dir, [`layer ${i} media type ${d.mediaType} is not known (known: `
        + `${Object.keys(LAYER_MEDIA).join(', ')})`]);
    }
    return { what: `layer ${i} (${d.digest})`, data: blob(d, `layer ${i}`), compression };
  });
  return build(dir, manifestDesc.digest, blob(manifest.config, 'config'), layers);
}

/** The linux/amd64 image of an index (nested indexes followed), or why there is none to take. */
function pickManifest(
  manifests: Descriptor[], input: string, readIndex: (d: Descriptor) => { manifests?: Descriptor[] }, depth = 0,
): Descriptor {
  if (depth > 4) throw new OciRefused(input, ['indexes nest deeper than 4']);
  const candidates: Descriptor[] = [];
  for (const d of manifests) {
    if (d.mediaType === MEDIA.ociIndex || d.mediaType === MEDIA.dockerList) {
      candidates.push(pickManifest(readIndex(d).manifests ?? [], input, readIndex, depth + 1));
    } else if (d.mediaType === MEDIA.ociManifest || d.mediaType === MEDIA.dockerManifest) candidates.push(d);
    else throw new OciRefused(input, [`index entry ${d.digest}: media type ${d.mediaType} is not known`]);
  }
  const platform = (d: Descriptor) => (d.platform ? `${d.platform.os}/${d.platform.architecture}` : undefined);
  const amd64 = candidates.filter((d) => !d.platform || platform(d) === 'linux/amd64');
  if (!candidates.length) throw new OciRefused(input, ['the index lists no image']);
  if (!amd64.length) {
    throw new OciRefused(input, [`no linux/amd64 image (present: ${candidates.map(platform).join(', ')})`]);
  }
  if (amd64.length > 1) {
    const names = amd64.map((d) => d.annotations?.['org.opencontainers.image.ref.name'] ?? d.digest);
    throw new OciRefused(input, [`${amd64.length} linux/amd64 images (${names.join(', ')}): keep one in the layout`]);
  }
  return amd64[0]!;
}

async function readDockerArchive(file: string): Promise<OciImage> {
  const entries = await readTar(readFileSync(file), file);
  const members = new Map(entries.map((e) => [e.header.name.replace(/^\.\//, ''), e.data]));
  const member = (name: string, what: string) => {
    const b = members.get(name);
    if (!b) throw new OciRefused(file, [`${what} ${name} is not in the archive`]);
    return b;
  };
  const images = json<{ Config: string; RepoTags?: string[]; Layers: string[] }[]>(
    member('manifest.json', 'its'), 'manifest.json', file);
  if (!Array.isArray(images) || images.length !== 1) {
    const tags = Array.isArray(images) ? images.flatMap((i) => i.RepoTags ?? ['(untagged)']).join(', ') : '';
    throw new OciRefused(file, [`manifest.json lists ${Array.isArray(images) ? images.length : 'no'} images`
      + `${tags ? ` (${tags})` : ''}: save one image`]);
  }
  const image = images[0]!;
  const config = member(image.Config, 'the config');
  const named = /([0-9a-f]{64})(\.json)?$/.exec(image.Config);
  if (named && digestOf(config) !== `sha256:${named[1]}`) {
    throw new OciRefused(file, [`the config ${image.Config} does not match its digest`]);
  }
  const layers = image.Layers.map((name, i) => {
    const data = member(name, `layer ${i}`);
    const compression = data[0] === 0x1f && data[1] === 0x8b ? 'gzip' as const
      : data.readUInt32LE(0) === 0xfd2fb528 ? 'zstd' as const : 'none' as const;
    return { what: `layer ${i} (${name})`, data, compression };
  });
  return build(file, digestOf(config), config, layers);
}

function decompress(l: { what: string; data: Buffer; compression: 'none' | 'gzip' | 'zstd' }, input: string): Buffer {
  try {
    if (l.compression === 'gzip') return zlib.gunzipSync(l.data);
    if (l.compression === 'zstd') return unzstd(l.data);
    return l.data;
  } catch (e) {
    throw new OciRefused(input, [`${l.what}: does not decompress as ${l.compression}: ${(e as Error).message}`]);
  }
}

interface ConfigJson {
  os?: string; architecture?: string;
  rootfs?: { type?: string; diff_ids?: string[] };
  config?: { Entrypoint?: string[] | null; Cmd?: string[] | null; Env?: string[] | null; WorkingDir?: string;
    ExposedPorts?: Record<string, object> | null; User?: string; Labels?: Record<string, string> | null };
}

async function build(input: string, digest: string, configBlob: Buffer,
  layers: { what: string; data: Buffer; compression: 'none' | 'gzip' | 'zstd' }[]): Promise<OciImage> {
  const config = json<ConfigJson>(configBlob, 'the config', input);
  if (config.os !== 'linux' || config.architecture !== 'amd64') {
    throw new OciRefused(input, [`the image is for ${config.os}/${config.architecture}, not linux/amd64`]);
  }
  const diffIds = config.rootfs?.diff_ids ?? [];
  if (diffIds.length !== layers.length) {
    throw new OciRefused(input, [`the config names ${diffIds.length} layers, the manifest ${layers.length}`]);
  }
  const root = new RootTree();
  const droppedSetid: string[] = [];
  for (const [i, l] of layers.entries()) {
    const tar = decompress(l, input);
    if (digestOf(tar) !== diffIds[i]) throw new OciRefused(input, [`${l.what}: does not match the config's diff_id`]);
    const outcome = root.apply(await readTar(tar, `${input}: ${l.what}`));
    if (outcome.problems.length) throw new OciRefused(input, outcome.problems.map((p) => `${l.what}: ${p}`));
    droppedSetid.push(...outcome.droppedSetid);
  }
  const c = config.config ?? {};
  const env: Record<string, string> = {};
  for (const kv of c.Env ?? []) {
    const eq = kv.indexOf('=');
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return {
    root, digest, droppedSetid: [...new Set(droppedSetid)],
    config: {
      entrypoint: c.Entrypoint ?? [], cmd: c.Cmd ?? [], env, workingDir: c.WorkingDir ?? '',
      exposedPorts: Object.keys(c.ExposedPorts ?? {}).sort(), user: c.User ?? '', labels: c.Labels ?? {},
    },
  };
}
