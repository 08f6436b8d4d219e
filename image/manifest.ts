// manifest: what a build produced (out/manifest.json): each artifact's size and sha256.
import { statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { sha256File } from './hash.ts';

export interface ArtifactInfo { file: string; size: number; sha256: string }
export interface Manifest {
  version: string; commit: string; kernel: { key: string; source: string }; artifacts: Record<string, ArtifactInfo>;
  /** The ids of the upgrade signing keys the system trusts. */
  upgradeKeys: string[];
  /** A build broken on purpose (machinery/sys/test-break.ts). */
  testBreak?: string;
}

export async function describeArtifact(path: string): Promise<ArtifactInfo> {
  return { file: basename(path), size: statSync(path).size, sha256: await sha256File(path) };
}

export function writeManifest(path: string, m: Manifest): void {
  writeFileSync(path, JSON.stringify(m, null, 2) + '\n');
}
