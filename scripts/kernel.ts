// kernel: builds the minimal kernel from Debian's linux-source (tinyconfig + our
// fragment) and caches it outside the repo, keyed by the fragment, the source
// version and this recipe. A cache hit costs nothing; a miss takes ~5 minutes.
// An appliance's kernel (its definition's kernel.fragment) is ours with its fragment
// on top, compiled from our kernel's kept object tree: only what the fragment changes.
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, copyFileSync, writeFileSync, statSync,
} from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { runProgram } from './lib/run-program.ts';
import { CACHE, ROOT } from './lib/paths.ts';
import { sha256 } from '../image/hash.ts';
import { step } from './lib/log.ts';
import { withLock } from './lib/lock.ts';
import {
  configLines, configProblems, KernelConfigRefused, missingOptions,
} from '../image/kernel-config.ts';
import type { KernelFragmentRequest } from '../image/appliance/kit-with-kernel.ts';

/** Unpacking the source takes about a minute; no tool here should take this long. */
const TOOL_TIMEOUT_MS = 30 * 60_000;

/**
 * `file args` to its end, or an error naming it with what it said. Not zx: this file is bundled into the package's
 * appliance command, which has no zx.
 */
async function run(file: string, args: string[]): Promise<void> {
  const r = await runProgram(file, args, { timeoutMs: TOOL_TIMEOUT_MS });
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.code}: ${r.err.trim()}`);
}

/** Bump when the recipe below changes in a way that changes the output. */
const RECIPE = '4';
export const FRAGMENT = join(ROOT, 'kernel-config', 'appliance.config');

/** modules: the installed tree `<release>/kernel/...` (no modules.dep: image/modules-dep.ts writes it). */
export interface KernelArtifact {
  bzImage: string; config: string; key: string; sourceVersion: string; modules: string; release: string;
}

function findSourceTarball(): string {
  const dir = '/usr/src';
  const tarballs = readdirSync(dir).filter((f) => /^linux-source-[\d.]+\.tar\.(xz|bz2|gz)$/.test(f)).sort();
  const last = tarballs.at(-1);
  if (!last) throw new Error(
    `no linux-source-*.tar.* in ${dir}: run \`npm run setup\` (installs Debian's linux-source)`,
  );
  return join(dir, last);
}

function sourceVersion(tarball: string): string {
  const pkg = tarball.replace(/^.*\/(linux-source-[\d.]+)\.tar\..*$/, '$1');
  try {
    const debVersion = execFileSync('dpkg-query', ['-W', '-f=${Version}', pkg], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
    return `${pkg}@${debVersion}`;
  } catch (e) {
    // dpkg-query exits 1 for a package it does not know; anything else is a real failure.
    if ((e as { status?: number }).status !== 1) throw e;
    const st = statSync(tarball); // not from a Debian package: size and mtime identify it
    return `${pkg}@${st.size}-${Math.floor(st.mtimeMs)}`;
  }
}

/** The unpacked source of `version`, where a build keeps it for the next. */
const sourceTree = (version: string) => join(CACHE, 'src', version.replace(/[^\w.@-]/g, '_'), 'linux');

/** The version of the kernel source this build compiles (`linux-source-6.1@<Debian version>`). */
export async function kernelSourceVersion(): Promise<string> {
  return sourceVersion(findSourceTarball());
}

/**
 * One file of that source (`include/uapi/asm-generic/errno.h`): from the unpacked tree when a kernel build
 * left it, else out of the tarball alone (seconds, not the minute of unpacking it all).
 */
export async function kernelSourceFile(rel: string): Promise<string> {
  const tarball = findSourceTarball();
  const unpacked = join(sourceTree(sourceVersion(tarball)), rel);
  if (existsSync(unpacked)) return readFileSync(unpacked, 'utf8');
  const top = tarball.replace(/^.*\/(linux-source-[\d.]+)\.tar\..*$/, '$1');
  const r = await runProgram('tar', ['-xOf', tarball, `${top}/${rel}`], { timeoutMs: TOOL_TIMEOUT_MS });
  if (r.code !== 0) throw new Error(`${tarball} has no ${top}/${rel}: ${r.err.trim()}`);
  return r.out;
}

export async function kernelKey(): Promise<{ key: string; tarball: string; version: string }> {
  const tarball = findSourceTarball();
  const version = sourceVersion(tarball);
  const key = sha256(RECIPE, version, configLines(readFileSync(FRAGMENT, 'utf8'))).slice(0, 16);
  return { key, tarball, version };
}

/**
 * What the kernel says of its build (uname -v, /proc/version): fixed, so that one source and config make one
 * bzImage, and a kernel compiled again from kept objects is not numbered #2.
 */
const BUILD_ENV = {
  KBUILD_BUILD_TIMESTAMP: 'Thu Jan  1 00:00:00 UTC 1970', KBUILD_BUILD_USER: 'cosi', KBUILD_BUILD_HOST: 'appliance',
  KBUILD_BUILD_VERSION: '1',
};

/** Runs make, printing a progress line every 200 compiled units instead of the whole log. */
function make(args: string[], cwd: string, log: (m: string) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...BUILD_ENV };
    const child = spawn('make', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    let units = 0;
    const tail: string[] = [];
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (/^\s+(CC|AS|LD|AR)\s/.test(line) && ++units % 200 === 0) log(`${units} units compiled`);
    };
    let buf = '';
    const feed = (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      lines.forEach(onLine);
    };
    child.stdout.on('data', feed);
    child.stderr.on('data', feed);
    child.on('error', reject);
    child.on('close', (code) => code === 0 ? resolve(units)
      : reject(new Error(`make ${args.join(' ')} failed (exit ${code}); last lines:\n${tail.join('\n')}`)));
  });
}

/** A cache entry `dir`'s kernel, once its bzImage is there (written last). */
function artifactIn(dir: string, key: string, version: string): KernelArtifact {
  return {
    bzImage: join(dir, 'bzImage'), config: join(dir, 'config'), key, sourceVersion: version,
    modules: join(dir, 'modules'), release: readFileSync(join(dir, 'release'), 'utf8').trim(),
  };
}

/** The kernel of cache entry `key`: there already, or compiled by `compileInto` under the entry's lock. */
async function cachedKernel(
  s: ReturnType<typeof step>, key: string, version: string, compileInto: (dir: string) => Promise<void>,
): Promise<{ kernel: KernelArtifact; built: boolean }> {
  const dir = join(CACHE, 'kernel', key);
  if (existsSync(join(dir, 'bzImage'))) return { kernel: artifactIn(dir, key, version), built: false };
  mkdirSync(join(CACHE, 'kernel'), { recursive: true });
  return withLock(
    join(CACHE, 'kernel', `${key}.lock`),
    (pid) => s.info(`another build (pid ${pid}) is compiling this kernel; waiting for it`),
    async () => {
      if (existsSync(join(dir, 'bzImage'))) return { kernel: artifactIn(dir, key, version), built: false };
      await compileInto(dir);
      return { kernel: artifactIn(dir, key, version), built: true };
    },
  );
}

export async function buildKernel(): Promise<KernelArtifact> {
  const s = step('kernel');
  const { key, tarball, version } = await kernelKey();
  const { kernel, built } = await cachedKernel(s, key, version, async (dir) => {
    const src = await unpackedSource(s, tarball, version);
    const obj = freshDir(join(dir, 'obj')); // whatever an interrupted run left goes
    const common = [`O=${obj}`, 'ARCH=x86_64'];
    const log = (m: string) => s.info(m);
    s.info(`configuring (tinyconfig + ${FRAGMENT})`);
    await make([...common, 'tinyconfig'], src, log);
    const fragment = readFileSync(FRAGMENT, 'utf8');
    writeFileSync(join(obj, '.config'), readFileSync(join(obj, '.config'), 'utf8') + '\n' + fragment);
    await make([...common, 'olddefconfig'], src, log);
    const missing = missingOptions(fragment, readFileSync(join(obj, '.config'), 'utf8'));
    if (missing.length) throw new Error(
      `kernel options from ${FRAGMENT} not enabled after olddefconfig `
        + `(missing dependency or typo): ${missing.join(', ')}`,
    );
    s.info(`compiling bzImage and modules with ${cpus().length} jobs (5 to 20 minutes on 2 cores)`);
    await compileAndInstall(src, obj, dir, log);
  });
  s.done(`${built ? 'built' : 'cached'} ${key} (${version})`);
  return kernel;
}

/**
 * The system's kernel compiled again with an appliance's fragment on top of its whole config, kept in the same cache
 * by the source, that config and the fragment's settings. The system's kernel keeps its object tree, so only what the
 * fragment changes is compiled (a whole build, 5 to 20 minutes, where it was compiled elsewhere). Throws
 * KernelConfigRefused when the fragment's settings did not hold after olddefconfig.
 */
export async function buildDerivedKernel(r: KernelFragmentRequest): Promise<KernelArtifact & { built: boolean }> {
  const say = (m?: string) => r.progress(`kernel: ${m}`);
  const s: ReturnType<typeof step> = { info: say, done: say };
  const tarball = findSourceTarball();
  const version = sourceVersion(tarball);
  const key = sha256(RECIPE, 'derived', version, configLines(r.base.config), configLines(r.fragment)).slice(0, 16);
  const baseDir = join(CACHE, 'kernel', r.base.key);
  const { kernel, built } = await cachedKernel(s, key, version, async (dir) => {
    const src = await unpackedSource(s, tarball, version);
    const log = (m: string) => s.info(m);
    const configure = async (obj: string) => {
      writeFileSync(join(obj, '.config'), readFileSync(join(obj, '.config'), 'utf8') + '\n' + r.fragment);
      await make([`O=${obj}`, 'ARCH=x86_64', 'olddefconfig'], src, log);
      const problems = configProblems(r.fragment, r.systemFragment, readFileSync(join(obj, '.config'), 'utf8'));
      if (problems.length) throw new KernelConfigRefused(r.fragmentFile, problems);
    };
    const baseConfig = join(baseDir, 'obj', '.config');
    if (existsSync(baseConfig) && readFileSync(baseConfig, 'utf8') === r.base.config) {
      s.info(`from the system kernel's objects (${r.base.key}): compiling what ${r.fragmentFile} changes`);
      await inBaseObjects(baseDir, async (obj) => {
        await configure(obj);
        s.info(`${await compileAndInstall(src, obj, dir, log)} units compiled`);
      });
      return;
    }
    s.info(`the system kernel's objects are not on this machine: compiling the whole kernel (5 to 20 minutes on 2 `
      + `cores; ${version})`);
    const obj = freshDir(join(dir, 'obj'));
    try {
      writeFileSync(join(obj, '.config'), r.base.config);
      await configure(obj);
      await compileAndInstall(src, obj, dir, log);
    } finally {
      rmSync(obj, { recursive: true, force: true }); // hundreds of MB that no later build can use
    }
  });
  s.done(`${built ? 'built' : 'cached'} ${key} (${r.fragmentFile} on ${r.base.key}, ${version})`);
  return { ...kernel, built };
}

/**
 * Runs `fn` on a copy of the system kernel's object tree at the tree's own path (its objtool records absolute paths:
 * anywhere else everything is compiled again), then puts the system's tree back. One at a time per system kernel; a
 * run that died between the two is mended by the next.
 */
async function inBaseObjects(baseDir: string, fn: (obj: string) => Promise<void>): Promise<void> {
  const obj = join(baseDir, 'obj');
  const kept = join(baseDir, 'obj.system');
  await withLock(`${baseDir}.objects.lock`, () => undefined, async () => {
    const restore = () => {
      rmSync(obj, { recursive: true, force: true });
      renameSync(kept, obj);
    };
    if (existsSync(kept)) restore(); // left by a run that died
    renameSync(obj, kept);
    try {
      await run('cp', ['-a', kept, obj]);
      await fn(obj);
    } finally {
      restore();
    }
  });
}

const freshDir = (dir: string) => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** The unpacked source of `version`, unpacked from `tarball` first when not there yet (about a minute). */
async function unpackedSource(s: ReturnType<typeof step>, tarball: string, version: string): Promise<string> {
  const src = sourceTree(version);
  if (existsSync(join(src, 'Makefile'))) return src;
  const srcRoot = dirname(src);
  s.info(`extracting ${tarball} (about a minute)`);
  rmSync(srcRoot, { recursive: true, force: true });
  mkdirSync(srcRoot, { recursive: true });
  await run('tar', ['-xf', tarball, '-C', srcRoot]);
  const top = readdirSync(srcRoot).find((d) => d.startsWith('linux-source'));
  if (!top) throw new Error(`${tarball} did not unpack to linux-source-*`);
  renameSync(join(srcRoot, top), src);
  return src;
}

/**
 * Compiles the configured object tree `obj` and fills the cache entry `dir`: the stripped modules, the release, the
 * config and the bzImage, last, so that a half-built entry never counts as a hit. The system kernel's object tree
 * stays in its entry: an appliance's kernel compiles from a copy of it. Returns how many units were compiled.
 */
async function compileAndInstall(src: string, obj: string, dir: string, log: (m: string) => void): Promise<number> {
  const common = [`O=${obj}`, 'ARCH=x86_64'];
  const units = await make([...common, `-j${cpus().length}`, 'bzImage', 'modules'], src, log);
  // Stripped modules into <dir>/modules/<release>/kernel/...; depmod is not needed (and
  // not installed): image/modules-dep.ts writes modules.dep from each module's .modinfo.
  const release = readFileSync(join(obj, 'include/config/kernel.release'), 'utf8').trim();
  const stage = join(dir, 'modroot');
  rmSync(stage, { recursive: true, force: true });
  await make(
    // --strip-unneeded, not 1 (--strip-debug): the symbols no relocation needs go too, 55 KB of the initramfs.
    [
      ...common, `INSTALL_MOD_PATH=${stage}`, 'INSTALL_MOD_STRIP=--strip-unneeded', 'DEPMOD=/bin/true',
      'modules_install',
    ], src, log,
  );
  const modules = join(dir, 'modules');
  rmSync(modules, { recursive: true, force: true });
  mkdirSync(join(modules, release), { recursive: true });
  await run('cp', ['-r', join(stage, 'lib/modules', release, 'kernel'), `${join(modules, release)}/`]);
  for (const f of ['modules.order', 'modules.builtin', 'modules.builtin.modinfo']) {
    const from = join(stage, 'lib/modules', release, f);
    if (existsSync(from)) copyFileSync(from, join(modules, release, f));
  }
  rmSync(stage, { recursive: true, force: true });
  writeFileSync(join(dir, 'release'), release + '\n');
  const bzImage = join(dir, 'bzImage');
  copyFileSync(join(obj, 'arch/x86/boot/bzImage'), bzImage + '.tmp');
  copyFileSync(join(obj, '.config'), join(dir, 'config'));
  renameSync(bzImage + '.tmp', bzImage);
  return units;
}
