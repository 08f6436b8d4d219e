// build-runtime-floor: an initramfs made like ours (image/initramfs.ts: stage0, the system image with the release's
// compression, the pinned Node made a single executable by image/sea.ts with our flags) whose program is
// runtime-floor.cjs: a first line, then the same executable spawned as plugins are. Booted by bench:boot, it shows
// what the runtime's own start costs, in one process and in six, before any code of ours.
// Built again only when one of those inputs changed (image/build-cache.ts).
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entriesKey, keyed } from '../../image/build-cache.ts';
import { sha256 } from '../../image/hash.ts';
import { initramfsEntries, INITRAMFS_ZSTD_LEVEL, writeCompressed } from '../../image/initramfs.ts';
import { APPLIANCE_EXEC_ARGV } from '../../image/runtime-flags.ts';
import { makeSea, SEA_RECIPE } from '../../image/sea.ts';
import { buildStage0 } from '../../image/stage0/build-stage0.ts';
import {
  RELEASE_COMPRESSION, SYSTEM_IMAGE_RECIPE, systemImageEntries, topLevelDirs, writeSystemImage,
} from '../../image/system-image.ts';

export interface RuntimeFloorInputs {
  /** The pinned runtime's node and its version (scripts/runtime.ts). */
  node: string;
  version: string;
  /** The native addon: the system image holds one, and its shared libraries come with it. */
  addon: string;
}

export async function buildRuntimeFloorInitramfs(outDir: string, i: RuntimeFloorInputs): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const program = fileURLToPath(new URL('runtime-floor.cjs', import.meta.url));
  const exe = join(outDir, 'runtime-floor');
  const seaKey = sha256(readFileSync(program), i.version, String(statSync(i.node).size), SEA_RECIPE,
    APPLIANCE_EXEC_ARGV.join(' '));
  await keyed(outDir, 'runtime-floor-sea', seaKey, [exe], async () => {
    await makeSea({ main: program, output: exe, node: i.node, execArgv: APPLIANCE_EXEC_ARGV });
  });
  const imageEntries = systemImageEntries({ init: exe, addon: i.addon });
  const image = join(outDir, 'runtime-floor.squashfs');
  const imageKey = sha256(SYSTEM_IMAGE_RECIPE, JSON.stringify(RELEASE_COMPRESSION), entriesKey(imageEntries));
  await keyed(outDir, 'runtime-floor-image', imageKey, [image], async () => {
    writeSystemImage(imageEntries, image, 0, RELEASE_COMPRESSION);
  });
  const entries = initramfsEntries({
    stage0: buildStage0(outDir), systemImage: { file: image, topLevelDirs: topLevelDirs(imageEntries) }, mtime: 0,
  });
  const out = join(outDir, 'runtime-floor-initramfs.cpio.zst');
  await keyed(outDir, 'runtime-floor-initramfs', sha256(entriesKey(entries)), [out], async () => {
    await writeCompressed(entries, out, INITRAMFS_ZSTD_LEVEL);
  });
  return out;
}
