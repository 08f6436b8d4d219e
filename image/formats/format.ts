// format: the shape every output format has (one module per format in this folder, all
// alike, as LinuxKit keeps its outputs): a name, one line of what it is for, and a build
// that writes its artifacts from the shared inputs. Formats that wrap the raw disk ask the
// context for it, which builds it once per run.
import type { KeyObject } from 'node:crypto';
import type { InstallPayload } from '../disk/install-payload.ts';
import type { DiskForm, RawDisk } from '../disk/raw.ts';

export interface BootArtifacts {
  kernel: string; initramfs: string; cmdline: string;
  /** A directory of the appliance's payload files (machinery/disk/slot-payload.ts); undefined: none. */
  payload?: string;
  /** The same system with its image on a disk (kitDiskForm): the raw disk's slot A boots it. Absent: self-contained. */
  diskForm?: DiskForm;
}

/** The key that signs upgrade bundles, and where it came from (a file, or the development key). */
export interface SigningKey { privateKey: KeyObject; description: string }

export interface FormatContext {
  inputs: BootArtifacts;
  /** What is being built: the version and commit the upgrade manifest names. */
  release: { version: string; commit: string };
  /** Where artifacts go (out/images). */
  outDir: string;
  /** Scratch space for this run. */
  workDir: string;
  /** Seeds GUIDs and ids: the same seed and inputs give the same bytes. */
  seed: string;
  /** Every timestamp written (SOURCE_DATE_EPOCH). */
  epoch: number;
  /** The raw disk, built on first use. */
  raw(): RawDisk;
  /** The install payload (the raw disk gzip'd, and its manifest) in the scratch space, built on first use. */
  installPayload(): Promise<InstallPayload>;
  /**
   * The initramfs an image without boot slots (ISO, PXE) boots: the build's, with the payload appended when there
   * is one (built on first use; its cost in RAM said through `progress`).
   */
  liveInitramfs(): Promise<string>;
  /** The upgrade signing key, read (or made) on first use. */
  signingKey(): SigningKey;
  progress(message: string): void;
}

export interface OutputFormat {
  name: string;
  /** What a user picks it for. */
  summary: string;
  /** Writes the format's files into ctx.outDir; returns their paths. */
  build(ctx: FormatContext): Promise<string[]> | string[];
}
