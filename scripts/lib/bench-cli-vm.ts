// bench-cli-vm: `npm run bench:cli -- --vm`: what a user of `npm start` waits for, each cosictl command of
// the README timed against the dev VM (TCG, 512 MiB, DHCP, as npm start boots it): the first call after
// the machine is healthy, then the median of the next runs. Each figure is the out/cosictl executable's wall time;
// with COSICTL_TIMING=1 in its environment cosictl says on stderr where its time went (connect, definitions,
// the calls), and that breakdown is printed for each command whose median is over a second.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootApiMachine, TEST_CA_DOCUMENT } from '../../qemu/api-machine.ts';
import { runProgram } from './run-program.ts';
import { fmtStats, stats } from './stats.ts';

/** COSICTL_TIMING's lines with the calls of one name made at once folded into one line (count, longest). */
function summarize(lines: string): string {
  const calls = new Map<string, { n: number; at: number; longest: number }>();
  const rest: string[] = [];
  for (const l of lines.split('\n')) {
    const m = /^cosictl timing: \+(\d+) ms (state\.\S+(?: \S+)?) (\d+) ms$/.exec(l);
    if (!m) {
      if (l) rest.push(`  ${l.replace(/^cosictl timing: /, '')}`);
      continue;
    }
    const c = calls.get(m[2]!) ?? { n: 0, at: Number(m[1]), longest: 0 };
    calls.set(m[2]!, { n: c.n + 1, at: c.at, longest: Math.max(c.longest, Number(m[3])) });
  }
  const folded = [...calls].map(([what, c]) => `  +${c.at} ms ${what}${c.n > 1 ? ` x${c.n}` : ''} ${c.longest} ms`);
  return [...folded, ...rest].join('\n') || '  (nothing said)';
}

export async function benchCliVm(runs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cli-vm-'));
  const docs = Array.from({ length: 9 }, (_, i) => `metadata: {type: motd, id: bench-${i}}\nspec: {text: "m${i}"}\n`);
  const motds = join(dir, 'motds.yaml');
  writeFileSync(motds, docs.join('---\n'));
  const machine = join(dir, 'machine.yaml');
  writeFileSync(machine, `${TEST_CA_DOCUMENT()}---\n${docs.join('---\n')}`);
  process.stderr.write('[bench:cli --vm] booting the dev VM (TCG, 512 MiB, DHCP)...\n');
  const m = await bootApiMachine({ memoryMiB: 512 }, 'dhcp');
  // Timed from a healthy machine: every plugin running, as a user finds it after `health --wait`.
  const healthy = await m.run(['health', '--wait', '5m'], undefined, 330_000);
  if (healthy.code !== 0) throw new Error(`the machine did not become healthy: ${healthy.err}`);
  const commands: [string, string[]][] = [
    ['get versions', ['get', 'versions']], ['health', ['health']], ['get links', ['get', 'links']],
    ['apply -f (9)', ['apply', '-f', motds]], ['diff -f (9)', ['diff', '-f', motds]],
    ['delete -f (9)', ['delete', '-f', motds]], ['apply-config', ['apply-config', '-f', machine]],
    ['support', ['support', '-o', join(dir, 'support.tar.gz')]], ['logs network', ['logs', 'network', '--tail', '20']],
  ];
  const env = { COSICTL_TIMING: '1' };
  const first = new Map<string, number>();
  const times = new Map<string, number[]>(commands.map(([n]) => [n, []]));
  const why = new Map<string, string>();
  try {
    for (let run = 0; run <= runs; run++) {
      for (const [name, argv] of commands) {
        const t0 = performance.now();
        const r = await runProgram(m.cosictl, ['--config', m.cosictlConfig, ...argv], { env, timeoutMs: 120_000 });
        const ms = performance.now() - t0;
        if (r.code !== 0 && !(name.startsWith('diff') && r.code === 1)) {
          throw new Error(`cosictl ${argv.join(' ')}: exit ${r.code}: ${r.err}`);
        }
        if (run === 0) first.set(name, ms);
        else times.get(name)!.push(ms);
        why.set(name, r.err.split('\n').filter((l) => l.startsWith('cosictl timing:')).join('\n'));
      }
      process.stderr.write(`[bench:cli --vm] run ${run} done\n`);
    }
    process.stdout.write(`\ncosictl against the dev VM (TCG), ${runs} runs after a first:\n`);
    process.stdout.write(`  ${'command'.padEnd(16)} ${'first'.padStart(8)}  then\n`);
    for (const [name] of commands) {
      process.stdout.write(`  ${name.padEnd(16)} ${`${(first.get(name)! / 1000).toFixed(2)} s`.padStart(8)}  `
        + `${fmtStats(stats(times.get(name)!.map((x) => x / 1000)), ' s', 2)}\n`);
    }
    // Where the time went, for each command over the issue's target of a second (its last run; the calls of one
    // name are folded into one line: how many, the longest).
    for (const [name] of commands.filter(([n]) => stats(times.get(n)!).median > 1000)) {
      process.stdout.write(`\nwhere ${name}'s time went (its last run):\n${summarize(why.get(name) ?? '')}\n`);
    }
  } finally {
    m.vm.kill();
  }
}
