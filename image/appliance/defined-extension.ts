// defined-extension: an extension as the appliance definition declares it (definition.ts reads it, extension-build.ts
// builds it): apart from both, so that neither imports the other's module for its shape.
import type { ExtensionManifest } from '../../machinery/model/extension-manifest.ts';

/**
 * Where an extension comes from, resolved against the definition's directory: a directory, an OCI layout or archive,
 * a prebuilt squashfs, or an image in a registry (`oci: oci://HOST/REPO@sha256:...`, pulled by digest at build).
 */
export type ExtensionSource = { dir: string } | { oci: string } | { squashfs: string } | { registry: string };

export interface DefinedExtension {
  name: string;
  source: ExtensionSource;
  /** dir: the whole manifest; oci: the fields given, completed from the image's config when built. */
  fields: Record<string, unknown>;
  manifest?: ExtensionManifest;
}
