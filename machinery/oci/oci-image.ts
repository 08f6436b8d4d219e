// oci-image: an OCI image as the unit people already have, read from an OCI image layout directory (one umoci or
// skopeo made, or one pulled from a registry by pull-layout.ts): the linux/amd64 image's manifest and config, its run
// settings (Entrypoint, Cmd, Env, WorkingDir, ExposedPorts, User, Labels) and its layers, each checked against its
// digest and size as it streams and against the config's diff_ids as it is unpacked (unpack.ts). Refused, with the
// input and the reason: no linux/amd64 image (the platforms present are named), several images and none chosen, media
// types we do not know, and whatever the layers refuse. Shared by the appliance build (image/oci/oci-image.ts adds
// `docker save` archives) and the machine (an extension's `oci://` source).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { LAYER_MEDIA, MEDIA } from './media.ts';
import { DEFAULT_UNPACK_LIMITS, LayersRefused, unpackLayers, type Compression, type LayerSource,
  type UnpackLimits } from './unpack.ts';

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
  /** Where it was read from, as what is said of it names it. */
  input: string;
  config: ImageRunConfig;
  /** The manifest's digest (an OCI layout), or the config's (a `docker save` archive). */
  digest: string;
  layers: LayerSource[];
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

const sha256Of = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

export function parseJson<T>(b: Buffer, what: string, input: string): T {
  try {
    return JSON.parse(b.toString('utf8')) as T;
  } catch (e) {
    throw new OciRefused(input, [`${what} is not JSON: ${(e as Error).message}`]);
  }
}

/** `stream` passed on whole, failing at its end when it is not `size` bytes of digest `digest`. */
function checkedAs(stream: Readable, digest: string, size: number, refuse: (why: string) => Error): Readable {
  const hash = createHash('sha256');
  let bytes = 0;
  const check = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > size) return done(refuse(`more than the ${size} bytes its descriptor says`));
      hash.update(chunk);
      return done(null, chunk);
    },
    flush(done) {
      if (bytes !== size) return done(refuse(`${bytes} bytes, not ${size}`));
      return done(`sha256:${hash.digest('hex')}` !== digest ? refuse('does not match its digest') : null);
    },
  });
  stream.on('error', (e: Error) => check.destroy(e));
  return stream.pipe(check);
}

/** Reads the OCI image layout in `dir`: its one linux/amd64 image, blobs checked as they are read. */
export function readOciLayout(dir: string): OciImage {
  if (!existsSync(dir)) throw new OciRefused(dir, ['no such file or directory']);
  if (!existsSync(join(dir, 'oci-layout'))) throw new OciRefused(dir, ['no oci-layout file: not an OCI image layout']);
  const fileOf = (d: Descriptor, what: string) => {
    if (!DIGEST_RE.test(d.digest)) throw new OciRefused(dir, [`${what}: digest ${d.digest} is not sha256:<64 hex>`]);
    const file = join(dir, 'blobs', 'sha256', d.digest.slice('sha256:'.length));
    if (!existsSync(file)) throw new OciRefused(dir, [`${what}: blob ${d.digest} is missing`]);
    return file;
  };
  // Index, manifest and config are small (the registry client bounds what it pulls): read whole.
  const blob = (d: Descriptor, what: string): Buffer => {
    const b = readFileSync(fileOf(d, what));
    if (b.length !== d.size) {
      throw new OciRefused(dir, [`${what}: blob ${d.digest} has ${b.length} bytes, not ${d.size}`]);
    }
    if (sha256Of(b) !== d.digest) throw new OciRefused(dir, [`${what}: blob ${d.digest} does not match its digest`]);
    return b;
  };
  const index = parseJson<{ manifests?: Descriptor[] }>(readFileSync(join(dir, 'index.json')), 'index.json', dir);
  const manifestDesc = pickManifest(index.manifests ?? [], dir, (d) => parseJson(blob(d, 'index'), 'an index', dir));
  const manifest = parseJson<{ mediaType?: string; config: Descriptor; layers: Descriptor[] }>(
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
    const file = fileOf(d, `layer ${i}`);
    const refuse = (why: string) => new LayersRefused([`layer ${i}: blob ${d.digest} ${why}`]);
    return { what: `layer ${i} (${d.digest})`, compression, open: () => checkedAs(createReadStream(file), d.digest,
      d.size, refuse) };
  });
  return imageOf(dir, manifestDesc.digest, blob(manifest.config, 'config'), layers);
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

interface ConfigJson {
  os?: string; architecture?: string;
  rootfs?: { type?: string; diff_ids?: string[] };
  config?: { Entrypoint?: string[] | null; Cmd?: string[] | null; Env?: string[] | null; WorkingDir?: string;
    ExposedPorts?: Record<string, object> | null; User?: string; Labels?: Record<string, string> | null };
}

/** The image its config and layers make: checked for linux/amd64 and one diff_id per layer. */
export function imageOf(
  input: string, digest: string, configBlob: Buffer,
  layers: { what: string; compression: Compression; open(): Readable }[],
): OciImage {
  const config = parseJson<ConfigJson>(configBlob, 'the config', input);
  if (config.os !== 'linux' || config.architecture !== 'amd64') {
    throw new OciRefused(input, [`the image is for ${config.os}/${config.architecture}, not linux/amd64`]);
  }
  const diffIds = config.rootfs?.diff_ids ?? [];
  if (diffIds.length !== layers.length) {
    throw new OciRefused(input, [`the config names ${diffIds.length} layers, the manifest ${layers.length}`]);
  }
  const c = config.config ?? {};
  const env: Record<string, string> = {};
  for (const kv of c.Env ?? []) {
    const eq = kv.indexOf('=');
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return {
    input, digest, layers: layers.map((l, i) => ({ ...l, diffId: diffIds[i]! })),
    config: {
      entrypoint: c.Entrypoint ?? [], cmd: c.Cmd ?? [], env, workingDir: c.WorkingDir ?? '',
      exposedPorts: Object.keys(c.ExposedPorts ?? {}).sort(), user: c.User ?? '', labels: c.Labels ?? {},
    },
  };
}

/**
 * Writes `image`'s root into `root` (unpack.ts); the paths whose setuid/setgid bits were dropped. What the layers
 * refuse is OciRefused naming the image; a read that fails rejects as it failed.
 */
export async function unpackImage(
  image: OciImage, root: string, limits: UnpackLimits = DEFAULT_UNPACK_LIMITS,
): Promise<{ droppedSetid: string[]; bytes: number }> {
  try {
    return await unpackLayers(image.layers, root, limits);
  } catch (e) {
    if (e instanceof LayersRefused) throw new OciRefused(image.input, e.problems);
    throw e;
  }
}
