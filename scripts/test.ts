// test: runs the test files with tap and ends with `N passed, N failed` (the line CI
// reads). A "test" is one t.test() block (or a bare assertion at a file's top level).
//   --unit   host tests only (no QEMU boots)
//   --qemu   the QEMU boots only
// The QEMU files run on two lanes (TEST_QEMU_JOBS, default 2), the longest first: a TCG guest keeps
// one host core busy and its test mostly waits, so two lanes nearly halve the wall time on 2 cores.
// Every file runs with TMPDIR set to one scratch directory of the run, removed at the end: what a test
// leaves in it (a kept edit, a VM's disks) cannot pile up on the machine from run to run. APPLIANCE_TEST_SCRATCH
// names it too, for what files share within a run (qemu/upgrade-setup.ts's builds of other versions).
// Every file runs under the pinned runtime (scripts/runtime.ts), first on PATH: tap, the test files and the `node`
// they start are the Node the appliance ships, not the host's.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { Parser } from 'tap-parser';
import { ROOT } from './lib/paths.ts';
import { nodeRuntime } from './runtime.ts';
import { listDir } from '../machinery/sys/optional-fs.ts';

const DIRS = ['cosi', 'machinery', 'image', 'init', 'native', 'plugins', 'scripts', 'qemu', 'cli', 'test'];

function findTests(dir: string): string[] {
  return listDir(dir).flatMap((n) => {
    const p = join(dir, n);
    if (n === 'node_modules' || n === 'build') return [];
    return statSync(p).isDirectory() ? findTests(p) : n.endsWith('.test.ts') ? [relative(ROOT, p)] : [];
  });
}

interface Counts {
  passed: number; failed: number; skipped: number; failures: string[];
  /** Each file's wall time as tap reports it (its top-level result's time=). */
  durations: { file: string; ms: number }[];
}

/**
 * Runs tap on `files` with `jobs` in parallel, echoing its TAP (at the end when `buffered`, so that
 * lanes running beside each other do not interleave), counting depth-1 results.
 */
function runTap(
  files: string[], jobs: number, counts: Counts, buffered = false, timeoutS?: number,
): Promise<number> {
  if (!files.length) return Promise.resolve(0);
  return new Promise((resolve) => {
    const args = ['-R', 'tap', `-j${jobs}`, ...(timeoutS ? [`--timeout=${timeoutS}`] : []), ...files];
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tap'), args, {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TMPDIR: scratch, APPLIANCE_TEST_SCRATCH: scratch, PATH: testPath },
    });
    const root = new Parser();
    root.on('assert', (r: { name: string; time?: number }) => {
      if (r.time !== undefined) counts.durations.push({ file: r.name, ms: r.time });
    });
    root.on('child', (file: Parser) => {
      file.on('assert', (r: { ok: boolean; skip?: unknown; todo?: unknown; name: string }) => {
        if (r.skip || r.todo) counts.skipped++;
        else if (r.ok) counts.passed++;
        else {
          counts.failed++;
          counts.failures.push(`${file.name}: ${r.name}`);
        }
      });
    });
    const held: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => {
      if (buffered) held.push(d);
      else process.stdout.write(d);
      root.write(d);
    });
    child.on('close', (code) => {
      process.stdout.write(Buffer.concat(held));
      root.end();
      resolve(code ?? 1);
    });
  });
}

/**
 * A QEMU file's limit: its boots wait for what they need with their own bounds, and a loaded 2-core host takes
 * 860 s over the longest (platform) where package.json's 900 s is for the unit files.
 */
const QEMU_FILE_TIMEOUT_S = 1800;

/** Runs `files` in order, one tap per file, on `lanes` lanes: each lane takes the next file when it is free. */
async function runLanes(files: string[], lanes: number, counts: Counts): Promise<number> {
  const queue = [...files];
  let code = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    for (let f = queue.shift(); f; f = queue.shift()) {
      code = (await runTap([f], 1, counts, true, QEMU_FILE_TIMEOUT_S)) || code;
    }
  }));
  return code;
}

const unitOnly = process.argv.includes('--unit');
const qemuOnly = process.argv.includes('--qemu');
if (process.argv.includes('--help')) {
  process.stdout.write(
    'usage: tsx scripts/test.ts [--unit | --qemu]\n  runs every *.test.ts; --unit skips the QEMU boots under qemu/,'
      + ' --qemu runs only them\n'
      + '  TEST_QEMU_JOBS=N  QEMU test files run N at a time (default 2; 1 for one VM at a time)\n'
      + '  files run with TMPDIR set to a scratch directory of the run, removed when it ends\n',
  );
  process.exit(0);
}
/** The longest QEMU files start first, so the two lanes end together (minutes on a 2-core machine). */
const SLOW_FIRST = [
  'qemu/extension.test.ts', 'qemu/upgrade.test.ts', 'qemu/fleet.test.ts', 'qemu/platform.test.ts',
  'qemu/images.test.ts', 'qemu/images-cloud.test.ts', 'qemu/devices.test.ts', 'qemu/faults.test.ts',
  'qemu/system.test.ts',
];
const slowFirst = (files: string[]) => [...SLOW_FIRST.filter((f) => files.includes(f)),
  ...files.filter((f) => !SLOW_FIRST.includes(f))];
const qemuJobs = Number(process.env.TEST_QEMU_JOBS ?? 2);
if (!Number.isInteger(qemuJobs) || qemuJobs < 1) {
  process.stderr.write(`test: TEST_QEMU_JOBS=${process.env.TEST_QEMU_JOBS}: not a whole number of at least 1\n`);
  process.exit(2);
}
/** Removes the run's scratch directory, unless something is still mounted in it (rm would reach into that). */
function removeScratch(): string {
  const mounted = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((l) => l.split(' ')[4] ?? '').filter((m) => m === scratch || m.startsWith(`${scratch}/`));
  if (mounted.length) return `kept ${scratch}: still mounted there: ${mounted.join(', ')}`;
  rmSync(scratch, { recursive: true, force: true });
  return `removed ${scratch}`;
}

const scratch = mkdtempSync(join(tmpdir(), 'appliance-test-'));
const runtime = await nodeRuntime();
const testPath = `${dirname(runtime.node)}:${process.env.PATH ?? ''}`;
process.stderr.write(`[test] under the pinned runtime, node ${runtime.version} (${runtime.node})\n`);
process.on('SIGINT', () => {
  process.stdout.write(`\n# scratch: ${removeScratch()}\n`);
  process.exit(130);
});
const minutes = (since: number) => `${((performance.now() - since) / 60_000).toFixed(1)} min`;
const all = DIRS.flatMap((d) => findTests(join(ROOT, d))).sort();
const isBoot = (f: string) => f.startsWith('qemu/');
const counts: Counts = { passed: 0, failed: 0, skipped: 0, failures: [], durations: [] };
const t0 = performance.now();
let code = qemuOnly ? 0 : await runTap(all.filter((f) => !isBoot(f)), 2, counts);
const phases = qemuOnly ? [] : [`unit ${minutes(t0)}`];
if (!unitOnly) {
  const t1 = performance.now();
  code = (await runLanes(slowFirst(all.filter(isBoot)), qemuJobs, counts)) || code;
  phases.push(`qemu ${minutes(t1)} (${qemuJobs} at a time)`);
}
/** The files by time taken, longest first: where `npm test`'s minutes go. */
function durationTable(): string {
  const rows = [...counts.durations].sort((a, b) => b.ms - a.ms);
  const width = Math.max(4, ...rows.map((r) => r.file.length));
  const line = (r: { file: string; ms: number }) => `# ${r.file.padEnd(width)} ${(r.ms / 1000).toFixed(1).padStart(7)}`;
  return ['', '# per-file duration (s)', ...rows.map(line)].join('\n') + '\n';
}
process.stdout.write(durationTable());
process.stdout.write(`\n# wall time: ${phases.join(', ')}\n# scratch: ${removeScratch()}\n`);
if (counts.failures.length) process.stdout.write(`\nfailed:\n${counts.failures.map((f) => `  ${f}`).join('\n')}\n`);
// tap exits non-zero also when a file crashes outside any test; count that as a failure.
if (code !== 0 && counts.failed === 0) counts.failed = 1;
process.stdout.write(
  `\n${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}\n`,
);
process.exit(counts.failed > 0 ? 1 : 0);
