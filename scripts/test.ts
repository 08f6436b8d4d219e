// test: runs the test files with tap and ends with `N passed, N failed` (the line CI
// reads). A "test" is one t.test() block (or a bare assertion at a file's top level).
//   --unit   host tests only (no QEMU boots)
import { isErrno } from '../native/errno.ts';
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Parser } from 'tap-parser';
import { ROOT } from './lib/paths.ts';

const DIRS = ['image', 'init', 'native', 'plugins', 'scripts', 'qemu', 'cli', 'test'];

function findTests(dir: string): string[] {
  let names: string[];
  try { names = readdirSync(dir); } catch (e) { if (isErrno(e, 'ENOENT')) return []; throw e; }
  return names.flatMap((n) => {
    const p = join(dir, n);
    if (n === 'node_modules' || n === 'build') return [];
    return statSync(p).isDirectory() ? findTests(p) : n.endsWith('.test.ts') ? [relative(ROOT, p)] : [];
  });
}

interface Counts { passed: number; failed: number; skipped: number; failures: string[] }

/** Runs tap on `files` with `jobs` in parallel, echoing its TAP, counting depth-1 results. */
function runTap(files: string[], jobs: number, counts: Counts): Promise<number> {
  if (!files.length) return Promise.resolve(0);
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tap'), ['-R', 'tap', `-j${jobs}`, ...files], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
    });
    const root = new Parser();
    root.on('child', (file: Parser) => {
      file.on('assert', (r: { ok: boolean; skip?: unknown; todo?: unknown; name: string }) => {
        if (r.skip || r.todo) counts.skipped++;
        else if (r.ok) counts.passed++;
        else { counts.failed++; counts.failures.push(`${file.name}: ${r.name}`); }
      });
    });
    child.stdout.on('data', (d: Buffer) => { process.stdout.write(d); root.write(d); });
    child.on('close', (code) => { root.end(); resolve(code ?? 1); });
  });
}

const unitOnly = process.argv.includes('--unit');
if (process.argv.includes('--help')) {
  process.stdout.write(
    'usage: tsx scripts/test.ts [--unit]\n  runs every *.test.ts; --unit skips the QEMU boots under qemu/\n',
  );
  process.exit(0);
}
const all = DIRS.flatMap((d) => findTests(join(ROOT, d))).sort();
const isBoot = (f: string) => f.startsWith('qemu/');
const counts: Counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
let code = await runTap(all.filter((f) => !isBoot(f)), 2, counts);
if (!unitOnly) code = (await runTap(all.filter(isBoot), 1, counts)) || code;
if (counts.failures.length) process.stdout.write(`\nfailed:\n${counts.failures.map((f) => `  ${f}`).join('\n')}\n`);
// tap exits non-zero also when a file crashes outside any test; count that as a failure.
if (code !== 0 && counts.failed === 0) counts.failed = 1;
process.stdout.write(
  `\n${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}\n`,
);
process.exit(counts.failed > 0 ? 1 : 0);
