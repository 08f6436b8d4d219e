// pull-layout: an image pulled from a registry into an OCI image layout directory (oci-layout, index.json naming the
// linux/amd64 manifest, blobs/sha256/...), so that whatever reads layouts (the appliance build's converter) reads a
// pulled image as it reads one umoci or skopeo made. Blobs already there are kept (content-addressed; the reader checks
// each against its digest), so a second pull of the same digest asks the registry for its manifest only.
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Descriptor, RegistryClient } from './registry.ts';

const blobPath = (dir: string, digest: string) => join(dir, 'blobs', 'sha256', digest.slice('sha256:'.length));

/** Pulls `client`'s image into the layout `dir`; reports each blob fetched; returns the manifest's digest. */
export async function pullToLayout(
  client: RegistryClient, dir: string, progress: (message: string) => void = () => undefined,
): Promise<string> {
  const m = await client.manifest();
  mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  for (const d of [m.config, ...m.layers] as Descriptor[]) {
    const file = blobPath(dir, d.digest);
    if (existsSync(file) && statSync(file).size === d.size) continue;
    progress(`pulling ${d.digest.slice(0, 19)} (${(d.size / 1e6).toFixed(1)} MB)`);
    await client.blob(d, file);
  }
  writeFileSync(blobPath(dir, m.digest), m.bytes);
  writeFileSync(join(dir, 'oci-layout'), `${JSON.stringify({ imageLayoutVersion: '1.0.0' })}\n`);
  writeFileSync(join(dir, 'index.json'), `${JSON.stringify({
    schemaVersion: 2, manifests: [{ mediaType: m.mediaType, digest: m.digest, size: m.bytes.length,
      platform: { os: 'linux', architecture: 'amd64' } }],
  })}\n`);
  return m.digest;
}
