// build: everything `npm start` and the tests boot, into out/:
//   vmlinuz, initramfs.cpio.zst, cmdline, manifest.json
// Each step is skipped when its inputs did not change (the kernel is cached outside
// the repo; the SEA and the initramfs are keyed by the hashes of what goes in).
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { $ } from 'zx';
import { bundle } from '../image/bundle.ts';
import { checkSeaRuns, makeSea } from '../image/sea.ts';
import { initramfsEntries, writeCompressed } from '../image/initramfs.ts';
import { describeArtifact, writeManifest } from '../image/manifest.ts';
import { buildKernel } from './kernel.ts';
import { buildNative } from './native.ts';
import { BUILD, OUT, ROOT } from './lib/paths.ts';
import { sha256, sha256File } from '../image/hash.ts';
import { step } from './lib/log.ts';

export const DEFAULT_CMDLINE = 'console=ttyS0 quiet panic=-1';

export interface BuildResult {
  kernel: string; initramfs: string; cmdline: string; exe: string; addon: string; manifest: string; cosictl: string;
}

/** Runs `make` only when `key` differs from the one recorded by the last successful run. */
async function keyed(name: string, key: string, outputs: string[], make: () => Promise<void>): Promise<boolean> {
  const stamp = join(BUILD, `${name}.key`);
  if (outputs.every(existsSync) && existsSync(stamp) && readFileSync(stamp, 'utf8') === key) return false;
  await make();
  writeFileSync(stamp, key);
  return true;
}

async function gitCommit(): Promise<string> {
  const r = await $({ cwd: ROOT, nothrow: true })`git rev-parse --short=12 HEAD`.quiet();
  return r.exitCode === 0 ? r.stdout.trim() : 'unknown';
}

/** hostOnly: just the executables (no initramfs, no kernel), for host tests in a hurry. */
export async function build(o: { hostOnly?: boolean } = {}): Promise<BuildResult> {
  mkdirSync(BUILD, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const commit = await gitCommit();
  const mtime = Number(process.env.SOURCE_DATE_EPOCH ?? 0);

  const addon = await buildNative();

  let s = step('bundle');
  const bundleFile = join(BUILD, 'init.cjs');
  await bundle({ entry: join(ROOT, 'init', 'main.ts'), outfile: bundleFile, version: pkg.version, commit });
  s.done(`${bundleFile} (${statSync(bundleFile).size} bytes)`);

  s = step('sea');
  const exe = join(BUILD, 'appliance');
  const node = process.execPath;
  const nodeId = `${node}:${statSync(node).size}:${statSync(node).mtimeMs}`;
  const seaKey = sha256(readFileSync(bundleFile), nodeId);
  const seaBuilt = await keyed('sea', seaKey, [exe], async () => {
    await makeSea({ main: bundleFile, output: exe, node });
    checkSeaRuns(exe, ['version'], new RegExp(`"version":"${pkg.version.replace(/\./g, '\\.')}"`));
  });
  s.done(seaBuilt ? `${exe} (${(statSync(exe).size / 1e6).toFixed(1)} MB)` : 'up to date');

  s = step('cosictl');
  const cliBundle = join(OUT, 'cosictl.cjs');
  const cliExe = join(OUT, 'cosictl');
  await bundle({ entry: join(ROOT, 'cli', 'cosictl.ts'), outfile: cliBundle, version: pkg.version, commit });
  const cliBuilt = await keyed('cosictl', sha256(readFileSync(cliBundle), nodeId), [cliExe], async () => {
    await makeSea({ main: cliBundle, output: cliExe, node, scratchDir: BUILD });
    checkSeaRuns(cliExe, ['--help'], /usage: cosictl/);
  });
  s.done(cliBuilt ? `${cliExe} and ${cliBundle}` : 'up to date');

  const partial = { exe, addon, cosictl: cliExe, kernel: '', initramfs: '', cmdline: '', manifest: '' };
  if (o.hostOnly) return partial;

  const kernel = await buildKernel(); // first: the initramfs carries its modules
  s = step('initramfs');
  const initramfs = join(OUT, 'initramfs.cpio.zst');
  const entries = initramfsEntries({
    init: exe, addon, mtime, modules: { dir: kernel.modules, release: kernel.release },
  });
  const treeKey = sha256(...entries.map(
    (e) => JSON.stringify({ ...e, data: e.type === 'file' ? sha256(e.data) : undefined }),
  ));
  const rdBuilt = await keyed('initramfs', treeKey, [initramfs], async () => {
    s.info(`compressing ${entries.length} entries with zstd -19 (about a minute)`);
    await writeCompressed(entries, initramfs, 19);
  });
  s.done(rdBuilt ? `${initramfs} (${(statSync(initramfs).size / 1e6).toFixed(1)} MB)` : 'up to date');

  const vmlinuz = join(OUT, 'vmlinuz');
  const vmlinuzStale = !existsSync(vmlinuz) || (await sha256File(vmlinuz)) !== (await sha256File(kernel.bzImage));
  if (vmlinuzStale) copyFileSync(kernel.bzImage, vmlinuz);
  copyFileSync(kernel.config, join(OUT, 'kernel.config'));
  const cmdline = join(OUT, 'cmdline');
  writeFileSync(cmdline, DEFAULT_CMDLINE + '\n');

  const manifest = join(OUT, 'manifest.json');
  writeManifest(manifest, {
    version: pkg.version, commit,
    kernel: { key: kernel.key, source: kernel.sourceVersion },
    artifacts: {
      vmlinuz: await describeArtifact(vmlinuz),
      initramfs: await describeArtifact(initramfs),
      cmdline: await describeArtifact(cmdline),
      cosictl: await describeArtifact(cliExe),
    },
  });
  process.stderr.write(`[build] artifacts in ${OUT}: vmlinuz, initramfs.cpio.zst, cmdline, manifest.json, cosictl\n`);
  return { kernel: vmlinuz, initramfs, cmdline, exe, addon, manifest, cosictl: cliExe };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--help')) {
    process.stdout.write(
      `usage: npm run build [-- --host-only]\n\n`
        + `Builds out/vmlinuz, out/initramfs.cpio.zst, out/cmdline, out/manifest.json and out/cosictl.\n`
        + `Steps whose inputs did not change are skipped; the kernel is cached in ~/.cache/cosi-appliance.\n`
        + `  --host-only   only the executables (out/build/appliance, out/cosictl), no image\n`,
    );
  } else {
    await build({ hostOnly: process.argv.includes('--host-only') });
  }
}
