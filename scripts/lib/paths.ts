// paths: where the build reads from and writes to, in one place.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** out/: the artifacts a user boots (vmlinuz, initramfs, cmdline, manifest). */
export const OUT = join(ROOT, 'out');
/** out/build: intermediate files (bundle, SEA blob, staged initramfs tree). */
export const BUILD = join(OUT, 'build');
/** Cache outside the repo, so a clean clone or `git clean` keeps the kernel. */
export const CACHE = process.env.APPLIANCE_CACHE
  ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'cosi-appliance');
