// media: the OCI and Docker media types an image is made of, shared by the build's reader of layouts and archives
// (oci-image.ts) and the registry client (registry.ts).
export const MEDIA = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
} as const;

/** The layer media types taken, and how each is compressed. */
export const LAYER_MEDIA: Readonly<Record<string, 'none' | 'gzip' | 'zstd'>> = {
  'application/vnd.oci.image.layer.v1.tar': 'none',
  'application/vnd.oci.image.layer.v1.tar+gzip': 'gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd': 'zstd',
  'application/vnd.docker.image.rootfs.diff.tar.gzip': 'gzip',
};
