// build-stage0: compiles stage0.c into a static executable (no shared libraries: it runs
// before the system image, where they live, is mounted).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Without a C library: its own `_start` and system calls, so no stack protector (it reads a canary from
 * thread-local storage nobody set up), no loops turned into memset/memcpy calls, no unwind tables, not
 * position-independent.
 */
const FREESTANDING = ['-nostdlib', '-ffreestanding', '-fno-stack-protector', '-fno-asynchronous-unwind-tables',
  '-fno-tree-loop-distribute-patterns', '-no-pie', '-Wl,--build-id=none'];

/** gcc -static, small and stripped; warnings are errors. */
export function compileStaticC(source: string, output: string, o: { freestanding?: boolean } = {}): void {
  try {
    execFileSync('gcc', ['-static', '-Os', '-s', '-Wall', '-Wextra', '-Werror', ...(o.freestanding ? FREESTANDING : []),
      '-o', output, source],
      { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = (e as { stderr?: Buffer }).stderr?.toString().trim();
    const why = err || (e as Error).message;
    throw new Error(`cannot compile ${source} (npm run setup installs gcc): ${why}`, { cause: e });
  }
}

export function buildStage0(outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  const exe = join(outDir, 'stage0');
  compileStaticC(fileURLToPath(new URL('stage0.c', import.meta.url)), exe, { freestanding: true });
  return exe;
}
