// initramfs: the root filesystem the kernel unpacks: our executable as /init, the
// native addon, the shared libraries they need, a few directories and the two device
// nodes the kernel and libc expect before devtmpfs is mounted. Nothing else: no
// shell, no busybox. Deterministic: sorted entries, fixed mtime, uid/gid 0.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { encodeCpio, normalizePath, sortEntries, type CpioEntry } from './cpio.ts';
import { sharedLibs } from './elf-deps.ts';
import { modulesAlias, modulesDep, modulesSoftdep, scanModules } from './modules-dep.ts';

export interface InitramfsInputs {
  /** The single executable; becomes /init. */
  init: string;
  /** The native addon; becomes /lib/appliance_native.node (found beside /init's lib/). */
  addon: string;
  /** Fixed mtime for every entry (SOURCE_DATE_EPOCH). */
  mtime: number;
  /** The kernel's modules, `<dir>/<release>/kernel/...`; shipped as /lib/modules/<release> with a modules.dep. */
  modules?: { dir: string; release: string };
  /** Files of the build's own (the trusted upgrade key), by absolute path in the image. */
  files?: { path: string; data: Buffer; mode: number }[];
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

const DIRS = ['dev', 'etc', 'lib', 'proc', 'run', 'sys', 'tmp', 'var'];

export function initramfsEntries(i: InitramfsInputs): CpioEntry[] {
  const t = { mtime: i.mtime, uid: 0, gid: 0 };
  const entries: CpioEntry[] = [];
  const dirs = new Set(DIRS);
  const add = (path: string, data: Buffer, mode: number) => {
    const p = normalizePath(path);
    for (let d = dirname(p); d !== '.'; d = dirname(d)) dirs.add(d);
    entries.push({ type: 'file', path: p, mode, data, ...t });
  };
  const file = (path: string, source: string) => add(path, readFileSync(source), statSync(source).mode & 0o755);
  file('init', i.init);
  file('lib/appliance_native.node', i.addon);
  for (const lib of sharedLibs([i.init, i.addon])) file(lib.path, lib.source);
  if (i.modules) {
    const root = join(i.modules.dir, i.modules.release);
    for (const f of filesUnder(root)) add(
      join('lib/modules', i.modules.release, relative(root, f)), readFileSync(f), 0o644,
    );
    const shipped = scanModules(root);
    add(join('lib/modules', i.modules.release, 'modules.dep'), Buffer.from(modulesDep(shipped)), 0o644);
    add(join('lib/modules', i.modules.release, 'modules.alias'), Buffer.from(modulesAlias(shipped)), 0o644);
    add(join('lib/modules', i.modules.release, 'modules.softdep'), Buffer.from(modulesSoftdep(shipped)), 0o644);
  }
  for (const f of i.files ?? []) add(f.path.replace(/^\/+/, ''), f.data, f.mode);
  for (const d of dirs) entries.push({ type: 'dir', path: d, mode: d === 'tmp' ? 0o1777 : 0o755, ...t });
  // The kernel opens /dev/console for init's stdio before anything is mounted.
  entries.push({ type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1, ...t });
  entries.push({ type: 'chardev', path: 'dev/null', mode: 0o666, major: 1, minor: 3, ...t });
  return sortEntries(entries);
}

/** Streams the archive into `zstd -<level>`; multi-threaded zstd output does not depend on the thread count. */
export function writeCompressed(entries: readonly CpioEntry[], output: string, level = 19): Promise<void> {
  return new Promise((resolve, reject) => {
    const z = spawn(
      'zstd', [`-${level}`, '-T0', '-q', '-f', '--no-progress', '-o', output], { stdio: ['pipe', 'inherit', 'pipe'] },
    );
    let err = '';
    z.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    z.on('error', (e) => reject(new Error(`cannot run zstd (npm run setup installs it): ${e.message}`)));
    z.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`zstd exited ${code}: ${err}`))));
    z.stdin.on('error', reject);
    (async () => {
      for (const chunk of encodeCpio(entries)) {
        if (!z.stdin.write(chunk)) await new Promise((r) => z.stdin.once('drain', r));
      }
      z.stdin.end();
    })().catch(reject);
  });
}
