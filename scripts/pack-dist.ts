// pack-dist: what `npm pack` puts in the package beside the sources it lists (package.json "files"), made by its
// prepack step: dist/appliance.mjs (the `appliance` command for the person's own Node), dist/system (the system kit:
// kernel, system image, stage0, each with its sha256: a build from the package compiles nothing), the example
// program `appliance init` copies (dist/examples/hello-web) and the cosictl bundle (dist/cosictl.cjs).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { bundle } from '../image/bundle.ts';
import { KIT_PARTS, openSystemKit, writeSystemKit, type OpenedKit } from '../image/appliance/system-kit.ts';
import { compileStaticC } from '../image/stage0/build-stage0.ts';
import { HELLO_WEB_SOURCE } from './appliance.ts';
import { build } from './build.ts';
import { BUILD, OUT, ROOT } from './lib/paths.ts';
import { step } from './lib/log.ts';

export const DIST = join(ROOT, 'dist');
/** The oldest Node the package supports (package.json engines). */
const NODE_TARGET = 'node20';

export async function packDist(): Promise<void> {
  await build();
  const s = step('dist');
  rmSync(DIST, { recursive: true, force: true });
  const system = join(DIST, 'system');
  mkdirSync(system, { recursive: true });
  const kit = await openSystemKit(BUILD);
  const paths = {} as OpenedKit['paths'];
  for (const part of KIT_PARTS) {
    paths[part] = join(system, basename(kit.paths[part]));
    copyFileSync(kit.paths[part], paths[part]);
  }
  await writeSystemKit(system, { ...kit, paths });
  await openSystemKit(system);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const command = join(DIST, 'appliance.mjs');
  await bundle({ entry: join(ROOT, 'scripts', 'appliance', 'package-main.ts'), outfile: command,
    version: pkg.version, commit: kit.commit, buildEpoch: 0, esm: { target: NODE_TARGET } });
  mkdirSync(join(DIST, 'examples'));
  compileStaticC(HELLO_WEB_SOURCE, join(DIST, 'examples', 'hello-web'));
  copyFileSync(join(OUT, 'cosictl.cjs'), join(DIST, 'cosictl.cjs'));
  // Loads under the Node that runs npm (not only the pinned runtime), away from this repository's node_modules (a
  // package it requires that is not inside it fails there, as in a person's project): its help is the proof.
  const alone = mkdtempSync(join(tmpdir(), 'appliance-bundle-'));
  try {
    copyFileSync(command, join(alone, 'appliance.mjs'));
    execFileSync(process.execPath, [join(alone, 'appliance.mjs'), '--help'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } finally {
    rmSync(alone, { recursive: true, force: true });
  }
  const mb = (f: string) => (statSync(f).size / 1e6).toFixed(1);
  s.done(`${command} (${mb(command)} MB), system ${kit.version} (${kit.commit}): kernel ${mb(paths.vmlinuz)} MB, `
    + `system image ${mb(paths.systemImage)} MB`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--help')) {
    process.stdout.write('usage: npm run pack-dist (npm pack runs it)\n\nBuilds what is stale (npm run build), then '
      + 'dist/: the appliance command, the system kit, the example program and cosictl, for the package.\n');
  } else await packDist();
}
