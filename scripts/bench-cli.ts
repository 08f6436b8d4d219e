// bench:cli: what a daily cosictl user waits for, against the built engine on this host
// (`appliance serve`, over mutual TLS on loopback): applying N documents (new, then
// unchanged), getting them as a table, deleting them by id and by -f. Each figure is the
// wall time of the out/cosictl executable, its own start included.
//   --docs N    documents per run (default 500)
//   --runs N    runs (default 3)
//   --vm        instead: the README's commands against the dev VM under TCG (scripts/lib/bench-cli-vm.ts)
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../init/engine/serve-harness.ts';
import { artifacts } from '../qemu/artifacts.ts';
import { benchArgs } from './lib/bench-args.ts';
import { fmtStats, stats } from './lib/stats.ts';
import { benchCliVm } from './lib/bench-cli-vm.ts';

const args = benchArgs(`usage: npm run bench:cli -- [--docs N] [--runs N] [--vm]
  times cosictl apply (new, unchanged), get and delete (ids, -f) of N documents against serve on this host;
  --vm: each of the README's commands against the dev VM (TCG), the first call and the next --runs,
  with where each one over a second spent it (COSICTL_TIMING=1)
`);
const docs = args.int('--docs', 500);
const runs = args.int('--runs', 3);
if (process.argv.includes('--vm')) {
  await benchCliVm(runs);
  process.exit(0);
}
const a = artifacts();
const cosictl = join(a.dir, 'cosictl');
const served = await startServe(a.exe);
const dir = mkdtempSync(join(tmpdir(), 'bench-cli-'));

async function timed(argv: string[]): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => execFile(cosictl, ['--config', served.cosictlConfig, ...argv],
    { maxBuffer: 64 << 20 },
    (e, _out, err) => (e ? reject(new Error(`cosictl ${argv.slice(0, 3).join(' ')}: ${err}`)) : resolve())));
  return performance.now() - t0;
}

const steps = ['apply (new)', 'apply (unchanged)', 'get (table)', 'delete (ids)', 'apply again', 'delete -f'];
const times: Record<string, number[]> = Object.fromEntries(steps.map((s) => [s, []]));
try {
  for (let run = 1; run <= runs; run++) {
    const ids = Array.from({ length: docs }, (_, i) => `bench-${run}-${i}`);
    const file = join(dir, `run-${run}.yaml`);
    writeFileSync(file, ids.map((id) => `metadata: {type: motd, id: ${id}}\nspec: {text: "${id}"}\n`).join('---\n'));
    const t = {
      'apply (new)': await timed(['apply', '-f', file]),
      'apply (unchanged)': await timed(['apply', '-f', file]),
      'get (table)': await timed(['get', 'motd', '--id-regexp', `^bench-${run}-`]),
      'delete (ids)': await timed(['delete', 'motd', ...ids]),
      'apply again': await timed(['apply', '-f', file]),
      'delete -f': await timed(['delete', '-f', file]),
    };
    for (const [k, v] of Object.entries(t)) times[k]!.push(v);
    process.stdout.write(`run ${run}: ${Object.entries(t).map(([k, v]) => `${k} ${(v / 1000).toFixed(2)} s`)
      .join(', ')}\n`);
  }
  const ms = (await Promise.all([1, 2, 3].map(() => timed(['version', '--client'])))).sort((x, y) => x - y)[1]!;
  process.stdout.write(`\n${docs} documents, ${runs} runs:\n`);
  for (const s of steps) {
    process.stdout.write(`  ${s.padEnd(18)} ${fmtStats(stats(times[s]!.map((x) => x / 1000)), ' s', 2)}\n`);
  }
  process.stdout.write(`  cosictl start      ${(ms / 1000).toFixed(2)} s (version --client: no machine asked)\n`);
} finally {
  await served.stop();
}
