// elf-deps: the shared libraries an executable loads, as `ldd` on the build host
// resolves them (the image runs the same binaries, so the same files must ship).
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

export interface SharedLib {
  /** where the loader looks for it (the path it gets in the image) */ path: string;
  /** the real file on the host */ source: string;
}

/**
 * Parses ldd output lines: `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` and
 * `/lib64/ld-linux-x86-64.so.2 (0x...)`.
 */
export function parseLdd(text: string, binary = 'binary'): string[] {
  const paths: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('linux-vdso') || line.startsWith('linux-gate')) continue;
    if (line.includes('not found')) throw new Error(`${binary}: ldd cannot resolve ${line.split(' ')[0]}`);
    if (line.includes('statically linked')) continue;
    const arrow = /=>\s+(\/\S+)/.exec(line);
    const bare = /^(\/\S+)\s+\(/.exec(line);
    const p = arrow?.[1] ?? bare?.[1];
    if (p) paths.push(p);
  }
  return paths;
}

export function sharedLibs(binaries: readonly string[]): SharedLib[] {
  const byPath = new Map<string, SharedLib>();
  for (const b of binaries) {
    const ldd = execFileSync('ldd', [b], { encoding: 'utf8' });
    for (const p of parseLdd(ldd, b)) byPath.set(p, { path: p, source: realpathSync(p) });
  }
  return [...byPath.values()];
}
