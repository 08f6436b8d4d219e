// format: the shape every output format has (one module per format in this folder, all
// alike, as LinuxKit keeps its outputs): a name, one line of what it is for, and a build
// that writes its artifacts from the shared inputs. Formats that wrap the raw disk ask the
// context for it, which builds it once per run.
import type { InstallPayload } from '../disk/install-payload.ts';
import type { RawDisk } from '../disk/raw.ts';

export interface BootArtifacts { kernel: string; initramfs: string; cmdline: string }

export interface FormatContext {
  inputs: BootArtifacts;
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
  progress(message: string): void;
}

export interface OutputFormat {
  name: string;
  /** What a user picks it for. */
  summary: string;
  /** Writes the format's files into ctx.outDir; returns their paths. */
  build(ctx: FormatContext): Promise<string[]> | string[];
}
