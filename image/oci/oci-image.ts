// oci-image: an OCI image as the build reads it: an OCI image layout directory (machinery/oci/oci-image.ts, shared
// with the machine), or a `docker save` archive, read here: its one image's config and layers (each compressed as its
// first bytes say), the config checked against the digest its name carries.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { sha256 } from '../hash.ts';
import { readTar } from '../../machinery/oci/tar-read.ts';
import { imageOf, OciRefused, parseJson, readOciLayout, type OciImage } from '../../machinery/oci/oci-image.ts';

export { LAYER_MEDIA, MEDIA } from '../../machinery/oci/media.ts';
export { OciRefused, unpackImage, type ImageRunConfig, type OciImage } from '../../machinery/oci/oci-image.ts';

/** Reads the image at `input`: a directory holding an OCI layout, or a file made by `docker save`. */
export async function readOciImage(input: string): Promise<OciImage> {
  if (!existsSync(input)) throw new OciRefused(input, ['no such file or directory']);
  return statSync(input).isDirectory() ? readOciLayout(input) : readDockerArchive(input);
}

const digestOf = (b: Buffer) => `sha256:${sha256(b)}`;

async function readDockerArchive(file: string): Promise<OciImage> {
  const entries = await readTar(readFileSync(file), file);
  const members = new Map(entries.map((e) => [e.header.name.replace(/^\.\//, ''), e.data]));
  const member = (name: string, what: string) => {
    const b = members.get(name);
    if (!b) throw new OciRefused(file, [`${what} ${name} is not in the archive`]);
    return b;
  };
  const images = parseJson<{ Config: string; RepoTags?: string[]; Layers: string[] }[]>(
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
      : data.length >= 4 && data.readUInt32LE(0) === 0xfd2fb528 ? 'zstd' as const : 'none' as const;
    return { what: `layer ${i} (${name})`, compression, open: () => Readable.from([data]) };
  });
  return imageOf(file, digestOf(config), config, layers);
}
