// build: everything `npm start` and the tests boot, into out/:
//   vmlinuz, initramfs.cpio.zst, cmdline, manifest.json
// Each step is skipped when its inputs did not change (the kernel is cached outside
// the repo; the SEA and the initramfs are keyed by the hashes of what goes in).
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { $ } from './lib/zx.ts';
import { bundle, bundlePlugin } from '../image/bundle.ts';
import { checkCodeCacheTaken, checkSeaRuns, makeSea, SEA_RECIPE, type SeaResult } from '../image/sea.ts';
import { CODE_CACHE_LOADER, CODE_CACHE_MAKER, makeCodeCaches, WARM_CONFIG } from '../image/code-cache.ts';
import { IMAGE_PLUGIN_PROCESSES } from '../plugins/index.ts';
import { APPLIANCE_EXEC_ARGV } from '../image/runtime-flags.ts';
import { entriesKey, keyed } from '../image/build-cache.ts';
import {
  describeCompression, DISK_INITRAMFS, DISK_SYSTEM_IMAGE, RELEASE_COMPRESSION, SYSTEM_IMAGE_FILE, SYSTEM_IMAGE_RECIPE,
  systemImageEntries, topLevelDirs,
  writeSystemImage, type SystemImageCompression,
} from '../image/system-image.ts';
import { buildStage0 } from '../image/stage0/build-stage0.ts';
import { scanModules } from '../image/modules-dep.ts';
import { describeArtifact, writeManifest } from '../image/manifest.ts';
import { buildKernel, FRAGMENT, kernelSourceVersion } from './kernel.ts';
import { updateErrnoFiles } from './gen-errno.ts';
import { buildNative } from './native.ts';
import { nodeRuntime } from './runtime.ts';
import { unsupportedBecause } from './lib/node-lines.ts';
import { BUILD, OUT, ROOT } from './lib/paths.ts';
import { sha256, sha256File } from '../image/hash.ts';
import { step } from './lib/log.ts';
import { keyIdOf } from '../machinery/disk/upgrade-bundle.ts';
import type { DiskForm } from '../image/disk/raw.ts';
import { kitDiskForm, kitInitramfs, writeSystemKit } from '../image/appliance/system-kit.ts';
import { TEST_BREAK_FILE, TEST_BREAKS, testBreakProblem } from '../machinery/sys/test-break.ts';
import { developmentSigningKey, loadSigningKey } from '../image/signing-key.ts';
import type { SigningKey } from '../image/formats/format.ts';

export const DEFAULT_CMDLINE = 'console=ttyS0 quiet panic=-1';

export interface BuildResult {
  kernel: string; initramfs: string; cmdline: string; exe: string; addon: string; manifest: string; cosictl: string;
  /** The same system with its image on a disk: what the disk images' slot A and an upgrade bundle carry. */
  diskForm: DiskForm;
}

/**
 * When the source was made, in seconds: SOURCE_DATE_EPOCH when set (reproducible builds), else the time of the commit
 * built (the same for every build of it), else now.
 */
async function sourceEpoch(): Promise<number> {
  const fixed = process.env.SOURCE_DATE_EPOCH;
  if (fixed !== undefined && /^\d+$/.test(fixed)) return Number(fixed);
  const r = await $({ cwd: ROOT, nothrow: true })`git log -1 --format=%ct`.quiet();
  return r.exitCode === 0 && /^\d+$/.test(r.stdout.trim()) ? Number(r.stdout.trim()) : Math.floor(Date.now() / 1000);
}

async function gitCommit(): Promise<string> {
  const r = await $({ cwd: ROOT, nothrow: true })`git rev-parse --short=12 HEAD`.quiet();
  return r.exitCode === 0 ? r.stdout.trim() : 'unknown';
}

export interface BuildOptions {
  /** Just the executables (no initramfs, no kernel), for host tests in a hurry. */
  hostOnly?: boolean;
  /** The upgrade signing key (PKCS#8 PEM) whose public half the system trusts; default: the development key. */
  signingKey?: string;
  /**
   * Another build beside the main one (the upgrade tests' versions): its own out/ folder, version and
   * test-break, a faster zstd level for its system image, no cosictl.
   */
  variant?: { outDir: string; version: string; testBreak?: string; zstdLevel: number };
}

/** The key that signs upgrade bundles: the given file, or the development key made once in out/dev. */
export const signingKeyOf = (file?: string): SigningKey => (file ? loadSigningKey(file)
  : developmentSigningKey(join(OUT, 'dev', 'upgrade-signing-key.pem')));

export async function build(o: BuildOptions = {}): Promise<BuildResult> {
  const OUT_DIR = o.variant?.outDir ?? OUT;
  const BUILD_DIR = o.variant ? join(OUT_DIR, 'build') : BUILD;
  mkdirSync(BUILD_DIR, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  if (o.variant) pkg.version = o.variant.version;
  const testBreak = o.variant?.testBreak;
  const breakProblem = testBreak === undefined ? undefined : testBreakProblem(testBreak);
  if (breakProblem) throw new Error(breakProblem);
  if (testBreak && o.signingKey) throw new Error('--test-break makes a broken build: not with a signing key of yours');
  const key = signingKeyOf(o.signingKey);
  const commit = await gitCommit();
  const buildEpoch = await sourceEpoch();
  const mtime = Number(process.env.SOURCE_DATE_EPOCH ?? 0);

  const runtime = await nodeRuntime();
  // Said on every build until the pin moves (issue 36): what ships in PID 1 gets no security fixes.
  const unsupported = unsupportedBecause(runtime.version, new Date().toISOString().slice(0, 10));
  if (unsupported) process.stderr.write(`[runtime] WARNING: ${unsupported}\n`);
  let s = step('errno');
  const errnoFiles = await updateErrnoFiles();
  const errnoSource = await kernelSourceVersion();
  s.done(errnoFiles.length ? `regenerated from ${errnoSource}: ${errnoFiles.join(', ')}` : 'up to date');
  const addon = await buildNative(runtime.nodedir);

  s = step('bundle');
  const bundleFile = join(BUILD_DIR, 'init.cjs');
  await bundle({ entry: join(ROOT, 'init', 'main.ts'), outfile: bundleFile, version: pkg.version, commit,
    buildEpoch });
  // Each plugin process of the image runs a bundle of its own (image/bundle.ts bundlePlugin).
  const roleBundles = Object.fromEntries(await Promise.all(IMAGE_PLUGIN_PROCESSES.map(async (plugin) => {
    const outfile = join(BUILD_DIR, `plugin-${plugin}.cjs`);
    await bundlePlugin({ plugin, root: ROOT, outfile, version: pkg.version, commit, buildEpoch });
    return [`plugin-${plugin}`, outfile] as const;
  })));
  const sizes = Object.entries(roleBundles).map(([role, f]) => `${role} ${Math.round(statSync(f).size / 1000)} kB`);
  s.done(`${bundleFile} (${statSync(bundleFile).size} bytes); ${sizes.join(', ')}`);

  s = step('sea');
  const exe = join(BUILD_DIR, 'appliance');
  const node = runtime.node;
  const nodeId = `${runtime.version}:${statSync(node).size}:${SEA_RECIPE}`;
  const seaKey = sha256(readFileSync(bundleFile), ...Object.values(roleBundles).map((f) => readFileSync(f)), nodeId,
    APPLIANCE_EXEC_ARGV.join(' '), readFileSync(CODE_CACHE_LOADER), readFileSync(CODE_CACHE_MAKER),
    readFileSync(addon), WARM_CONFIG);
  let sea: SeaResult | undefined;
  let caches: Record<string, string> = {};
  const seaBuilt = await keyed(BUILD_DIR, 'sea', seaKey, [exe], async () => {
    // The bundles (the whole program's, each plugin's) and a code cache per role as assets, behind a loader
    // (image/code-cache-loader.cjs).
    caches = await makeCodeCaches({ node, execArgv: APPLIANCE_EXEC_ARGV, bundle: bundleFile, roleBundles, addon,
      plugins: IMAGE_PLUGIN_PROCESSES, outDir: join(BUILD_DIR, 'code-cache') });
    const roles = join(BUILD_DIR, 'code-cache-roles.json');
    writeFileSync(roles, JSON.stringify(Object.keys(caches)));
    const bundleRoles = join(BUILD_DIR, 'bundle-roles.json');
    writeFileSync(bundleRoles, JSON.stringify(Object.keys(roleBundles)));
    sea = await makeSea({ main: CODE_CACHE_LOADER, output: exe, node, execArgv: APPLIANCE_EXEC_ARGV, assets: {
      bundle: bundleFile, 'code-cache-roles': roles, 'bundle-roles': bundleRoles,
      ...Object.fromEntries(Object.entries(roleBundles).map(([role, file]) => [`bundle-${role}`, file])),
      ...Object.fromEntries(Object.entries(caches).map(([role, file]) => [`code-cache-${role}`, file])),
    } });
    checkSeaRuns(exe, ['version'], new RegExp(`"version":"${pkg.version.replace(/\./g, '\\.')}"`));
    checkCodeCacheTaken(exe);
  });
  const icu = sea?.icu ? `; ICU data ${(sea.icu.bytesBefore / 1e6).toFixed(1)} MB -> `
    + `${(sea.icu.bytesAfter / 1e6).toFixed(1)} MB, English only` : sea ? `; ${node} embeds no ICU data` : '';
  const size = `${(statSync(exe).size / 1e6).toFixed(1)} MB`;
  const cached = Object.values(caches).reduce((n, f) => n + statSync(f).size, 0);
  const cacheSaid = seaBuilt ? `; code caches ${(cached / 1e6).toFixed(1)} MB: ${Object.keys(caches).join(', ')}` : '';
  s.done(seaBuilt ? `${exe} (${size}, node ${runtime.version}${icu}${cacheSaid})` : 'up to date');

  const cliExe = join(OUT, 'cosictl');
  if (!o.variant) {
    s = step('cosictl');
    const cliBundle = join(OUT, 'cosictl.cjs');
    await bundle({ entry: join(ROOT, 'cli', 'cosictl.ts'), outfile: cliBundle, version: pkg.version, commit,
      buildEpoch });
    const cliBuilt = await keyed(BUILD_DIR, 'cosictl', sha256(readFileSync(cliBundle), nodeId), [cliExe], async () => {
      await makeSea({ main: cliBundle, output: cliExe, node, scratchDir: BUILD });
      checkSeaRuns(cliExe, ['--help'], /usage: cosictl/);
    });
    s.done(cliBuilt ? `${cliExe} and ${cliBundle}` : 'up to date');
  }

  const partial = { exe, addon, cosictl: cliExe, kernel: '', initramfs: '', cmdline: '', manifest: '',
    diskForm: { image: '', initramfs: '', compressedImage: '' } };
  if (o.hostOnly) return partial;

  const kernel = await buildKernel(); // first: the system image carries its modules
  s = step('system image');
  const systemImage = join(BUILD_DIR, SYSTEM_IMAGE_FILE);
  const imageEntries = systemImageEntries({
    init: exe, addon, modules: { dir: kernel.modules, release: kernel.release },
  });
  // A variant (the tests' other versions) trades size for a faster build.
  const compression: SystemImageCompression = o.variant
    ? { ...RELEASE_COMPRESSION, compressor: 'zstd', level: o.variant.zstdLevel } : RELEASE_COMPRESSION;
  const imageKey = sha256(SYSTEM_IMAGE_RECIPE, JSON.stringify(compression), String(mtime), entriesKey(imageEntries));
  const imageBuilt = await keyed(BUILD_DIR, 'system-image', imageKey, [systemImage], async () => {
    s.info(`squashfs of ${imageEntries.length} files, ${describeCompression(compression)} (about half a minute)`);
    writeSystemImage(imageEntries, systemImage, mtime, compression);
  });
  s.done(imageBuilt ? `${systemImage} (${(statSync(systemImage).size / 1e6).toFixed(1)} MB)` : 'up to date');

  const vmlinuz = join(OUT_DIR, 'vmlinuz');
  const vmlinuzStale = !existsSync(vmlinuz) || (await sha256File(vmlinuz)) !== (await sha256File(kernel.bzImage));
  if (vmlinuzStale) copyFileSync(kernel.bzImage, vmlinuz);
  // The parts an appliance build starts from (image/appliance/system-kit.ts), listed with their sha256.
  // The kernel's config and fragment: an appliance's kernel.fragment goes on top of them.
  const kernelConfig = join(BUILD_DIR, 'kernel.config');
  copyFileSync(kernel.config, kernelConfig);
  const kernelFragment = join(BUILD_DIR, 'kernel-fragment.config');
  copyFileSync(FRAGMENT, kernelFragment);
  const kit = await writeSystemKit(BUILD_DIR, {
    version: pkg.version, commit, cmdline: DEFAULT_CMDLINE, topLevelDirs: topLevelDirs(imageEntries),
    modules: scanModules(join(kernel.modules, kernel.release)).map((m) => m.name),
    kernel: { key: kernel.key, source: kernel.sourceVersion, release: kernel.release }, compression,
    paths: { vmlinuz, systemImage, stage0: buildStage0(BUILD_DIR), kernelConfig, kernelFragment },
  });

  s = step('initramfs');
  const initramfs = join(OUT_DIR, 'initramfs.cpio.zst');
  // The system trusts the key its own upgrades are signed with; a broken test build says how it is broken.
  const keyId = keyIdOf(key.privateKey);
  const ownFiles = testBreak ? [{ path: TEST_BREAK_FILE, mode: 0o644, data: Buffer.from(`${testBreak}\n`) }] : [];
  const rdBuilt = await kitInitramfs(kit, {
    key, mtime, output: initramfs, cacheDir: BUILD_DIR,
    files: ownFiles,
  });
  s.done(rdBuilt ? `${initramfs} (${(statSync(initramfs).size / 1e6).toFixed(1)} MB)` : 'up to date');
  // The same system with its image read from a disk (stage0.c, from_disk): what the disk images and bench:boot boot,
  // and what an upgrade bundle carries for them (a variant's too: the upgrade tests' disks take it).
  s = step('disk form');
  const disk = await kitDiskForm(kit, {
    key, mtime, output: join(BUILD_DIR, DISK_INITRAMFS), image: join(BUILD_DIR, DISK_SYSTEM_IMAGE),
    cacheDir: BUILD_DIR,
    files: ownFiles,
  });
  s.done(`${disk.image} (${(statSync(disk.image).size / 1e6).toFixed(1)} MB; zstd'd for upgrades `
    + `${(statSync(disk.compressedImage).size / 1e6).toFixed(1)} MB), ${disk.initramfs}`);

  copyFileSync(kernel.config, join(OUT_DIR, 'kernel.config'));
  const cmdline = join(OUT_DIR, 'cmdline');
  writeFileSync(cmdline, DEFAULT_CMDLINE + '\n');

  const manifest = join(OUT_DIR, 'manifest.json');
  writeManifest(manifest, {
    version: pkg.version, commit, upgradeKeys: [keyId], ...(testBreak ? { testBreak } : {}),
    kernel: { key: kernel.key, source: kernel.sourceVersion },
    artifacts: {
      vmlinuz: await describeArtifact(vmlinuz),
      initramfs: await describeArtifact(initramfs),
      cmdline: await describeArtifact(cmdline),
      ...(o.variant ? {} : { cosictl: await describeArtifact(cliExe) }),
    },
  });
  process.stderr.write(`[build] artifacts in ${OUT_DIR}: vmlinuz, initramfs.cpio.zst, cmdline, manifest.json`
    + `${o.variant ? '' : ', cosictl'}; upgrades signed by ${keyId} are trusted\n`);
  return { kernel: vmlinuz, initramfs, cmdline, exe, addon, manifest, cosictl: cliExe, diskForm: disk };
}

const USAGE = `usage: npm run build [-- --host-only] [--signing-key FILE]
       npm run build -- --variant DIR --version V [--test-break WHAT] [--zstd-level N]

Builds out/vmlinuz, out/initramfs.cpio.zst, out/cmdline, out/manifest.json and out/cosictl.
Steps whose inputs did not change are skipped; the kernel is cached in ~/.cache/cosi-appliance.
  --host-only         only the executables (out/build/appliance, out/cosictl), no image
  --signing-key FILE  the Ed25519 key (PKCS#8 PEM) upgrades are signed with: the system trusts its
                      public half; default: the development key in out/dev/upgrade-signing-key.pem
  --variant DIR       another build, into DIR (the upgrade tests' versions): with --version V, and
                      --test-break WHAT (${TEST_BREAKS.join(', ')}) for one broken on purpose;
                      --zstd-level N: its system image's zstd level (default 12; a release: 19)
`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const value = (name: string) => {
    const at = argv.indexOf(name);
    if (at < 0) return undefined;
    const v = argv[at + 1];
    if (v === undefined || v.startsWith('--')) {
      process.stderr.write(`build: ${name} needs a value\n`);
      process.exit(2);
    }
    return v;
  };
  if (argv.includes('--help')) {
    process.stdout.write(USAGE);
  } else {
    const signingKey = value('--signing-key');
    const variantDir = value('--variant');
    const version = value('--version');
    if (variantDir && !version) {
      process.stderr.write('build: --variant needs --version\n');
      process.exit(2);
    }
    const testBreak = value('--test-break');
    const zstdLevel = Number(value('--zstd-level') ?? 12);
    await build({
      hostOnly: argv.includes('--host-only'), ...(signingKey ? { signingKey } : {}),
      ...(variantDir
        ? { variant: { outDir: variantDir, version: version!, zstdLevel, ...(testBreak ? { testBreak } : {}) } } : {}),
    });
  }
}
