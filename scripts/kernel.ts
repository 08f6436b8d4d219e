// kernel: builds the minimal kernel from Debian's linux-source (tinyconfig + our
// fragment) and caches it outside the repo, keyed by the fragment, the source
// version and this recipe. A cache hit costs nothing; a miss takes ~5 minutes.
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, copyFileSync, writeFileSync, statSync,
} from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { $ } from './lib/zx.ts';
import { CACHE, ROOT } from './lib/paths.ts';
import { sha256 } from '../image/hash.ts';
import { step } from './lib/log.ts';
import { withLock } from './lib/lock.ts';

/** Bump when the recipe below changes in a way that changes the output. */
const RECIPE = '3';
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

/** The unpacked source of `version`, where compile() keeps it between builds. */
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
  const r = await $({ nothrow: true })`tar -xOf ${tarball} ${`${top}/${rel}`}`.quiet();
  if (r.exitCode !== 0) throw new Error(`${tarball} has no ${top}/${rel}: ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * What of the fragment makes the kernel: its settings, `# CONFIG_X is not set` included, without comments or blank
 * lines, so that rewording a comment does not cost a rebuild.
 */
export const configLines = (fragment: string) => fragment.split('\n')
  .filter((l) => /^CONFIG_\w+=|^# CONFIG_\w+ is not set/.test(l.trim())).map((l) => l.trim()).join('\n');

export async function kernelKey(): Promise<{ key: string; tarball: string; version: string }> {
  const tarball = findSourceTarball();
  const version = sourceVersion(tarball);
  const key = sha256(RECIPE, version, configLines(readFileSync(FRAGMENT, 'utf8'))).slice(0, 16);
  return { key, tarball, version };
}

/** Runs make, printing a progress line every 200 compiled units instead of the whole log. */
function make(args: string[], cwd: string, log: (m: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('make', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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
    child.on('close', (code) => code === 0 ? resolve()
      : reject(new Error(`make ${args.join(' ')} failed (exit ${code}); last lines:\n${tail.join('\n')}`)));
  });
}

/**
 * Lines `CONFIG_X=y` or `=m` of the fragment that did not end up so (a dependency is
 * missing, or a typo). A `=m` that became `=y` counts as missing too: the tests rely on
 * those being loadable modules.
 */
export function missingOptions(fragment: string, finalConfig: string): string[] {
  const have = new Map(finalConfig.split('\n').map((l) => /^(CONFIG_\w+)=([ym])$/.exec(l))
    .filter((m) => m !== null).map((m) => [m[1]!, m[2]!]));
  return fragment.split('\n').map((l) => /^(CONFIG_\w+)=([ym])$/.exec(l.trim()))
    .filter((m) => m !== null)
    .filter((m) => have.get(m[1]!) !== m[2]).map((m) => `${m[1]}=${m[2]} (got ${have.get(m[1]!) ?? 'not set'})`);
}

export async function buildKernel(): Promise<KernelArtifact> {
  const s = step('kernel');
  const { key, tarball, version } = await kernelKey();
  const dir = join(CACHE, 'kernel', key);
  const bzImage = join(dir, 'bzImage');
  const artifact = (): KernelArtifact => ({
    bzImage, config: join(dir, 'config'), key, sourceVersion: version,
    modules: join(dir, 'modules'), release: readFileSync(join(dir, 'release'), 'utf8').trim(),
  });
  if (existsSync(bzImage)) {
    s.done(`cached ${key} (${version})`);
    return artifact();
  }
  mkdirSync(join(CACHE, 'kernel'), { recursive: true });
  return withLock(
    join(CACHE, 'kernel', `${key}.lock`),
    (pid) => s.info(`another build (pid ${pid}) is compiling this kernel; waiting for it`),
    async () => {
      if (existsSync(bzImage)) {
        s.done(`built by the other run: ${key}`);
        return artifact();
      }
      await compile(s, tarball, version, dir);
      s.done(`built ${key} (${version})`);
      return artifact();
    },
  );
}

async function compile(s: ReturnType<typeof step>, tarball: string, version: string, dir: string): Promise<void> {
  const bzImage = join(dir, 'bzImage');
  const config = join(dir, 'config');

  const src = sourceTree(version);
  const srcRoot = dirname(src);
  if (!existsSync(join(src, 'Makefile'))) {
    s.info(`extracting ${tarball} (about a minute)`);
    rmSync(srcRoot, { recursive: true, force: true });
    mkdirSync(srcRoot, { recursive: true });
    await $`tar -xf ${tarball} -C ${srcRoot}`;
    const top = readdirSync(srcRoot).find((d) => d.startsWith('linux-source'));
    if (!top) throw new Error(`${tarball} did not unpack to linux-source-*`);
    renameSync(join(srcRoot, top), src);
  }

  const obj = join(dir, 'obj');
  rmSync(obj, { recursive: true, force: true }); // whatever an interrupted run left
  mkdirSync(obj, { recursive: true });
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

  s.info(`compiling bzImage and modules with ${cpus().length} jobs (about 5 minutes on 2 cores)`);
  await make([...common, `-j${cpus().length}`, 'bzImage', 'modules'], src, log);
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
  await $`cp -r ${join(stage, 'lib/modules', release, 'kernel')} ${join(modules, release)}/`;
  for (const f of ['modules.order', 'modules.builtin', 'modules.builtin.modinfo']) {
    const from = join(stage, 'lib/modules', release, f);
    if (existsSync(from)) copyFileSync(from, join(modules, release, f));
  }
  rmSync(stage, { recursive: true, force: true });
  writeFileSync(join(dir, 'release'), release + '\n');
  copyFileSync(join(obj, 'arch/x86/boot/bzImage'), bzImage + '.tmp');
  copyFileSync(join(obj, '.config'), config);
  renameSync(bzImage + '.tmp', bzImage); // last, so a half-built cache entry never counts as a hit
  rmSync(obj, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const k = await buildKernel();
  console.log(k.bzImage);
}
