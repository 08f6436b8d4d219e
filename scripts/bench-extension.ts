// bench:extension: what running an extension costs in a booted machine (QEMU, TCG, 384 MiB): the example
// Python (grpcio) plugin of plugins/examples/hello-python, its image built from this host's Debian
// packages and served over slirp's guestfwd from loopback. Each run declares a new image (another
// version, so another hash: fetched, checked, mounted, started again) and waits for it to run. Per run
// and as medians: declared -> running as the engine measured it (ExtensionStatus.startSeconds, and the
// part before its program starts, prepareSeconds), the same seen from the client, the extension's
// memory (its cgroup's memory.current once running), and the machine's used memory before and after.
//   --runs N   images declared in a row (default 3)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootApiMachine } from '../qemu/api-machine.ts';
import { buildHelloImages, HELLO_MANIFEST, IMAGE_HOST, imageUrl, serveImages } from '../qemu/extension-image.ts';
import { build } from './build.ts';
import { benchArgs } from './lib/bench-args.ts';
import { fmtStats, stats } from './lib/stats.ts';

const args = benchArgs(
  'usage: npm run bench:extension -- [--runs N]\n\n'
    + 'Builds the example Python extension (N images, one version each), boots the machine (QEMU, TCG, 384 MiB)\n'
    + 'and declares each image in turn. Prints per run and as medians: declared -> running (engine and client),\n'
    + 'the extension\'s memory (cgroup memory.current) and the machine\'s used memory before and after.\n',
);
const runs = args.int('--runs', 3);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
await build();
const dir = mkdtempSync(join(tmpdir(), 'bench-extension-'));
let machine: { vm: { kill(): void } } | undefined;
process.on('exit', () => {
  machine?.vm.kill();
  rmSync(dir, { recursive: true, force: true });
});
const manifests = Object.fromEntries([...Array(runs).keys()].map((i) =>
  [`hello-${i}`, HELLO_MANIFEST().replace('version: 1.0.0', `version: 1.0.${i}`)]));
const images = buildHelloImages(join(dir, 'images'), manifests);
const server = await serveImages(join(dir, 'images'));
process.on('exit', () => server.close());
log('booting ...');
const m = await bootApiMachine({ memoryMiB: 384, guestfwd: [{ ...IMAGE_HOST, hostPort: server.port }] });
machine = m;
const usedMiB = async () => {
  const r = await m.run(['memory', '-o', 'json']);
  if (r.code !== 0) throw new Error(`cosictl memory failed: ${r.err.trim()}`);
  const v = JSON.parse(r.out) as { memoryTotalKib: number; memoryAvailableKib: number };
  return (Number(v.memoryTotalKib) - Number(v.memoryAvailableKib)) / 1024;
};
interface Run {
  engine: number; prepare: number; client: number; memory: number; before: number; after: number;
}
const results: Run[] = [];
for (let i = 0; i < runs; i++) {
  const image = images[`hello-${i}`]!;
  const before = await usedMiB();
  const t0 = performance.now();
  const applied = await m.run(['apply', '-f', '-'],
    `metadata: {type: extensions, id: hello}\nspec: {source: "${imageUrl(`hello-${i}`)}", sha256: ${image.sha256}}\n`);
  if (applied.code !== 0) throw new Error(`run ${i + 1}: apply failed: ${applied.err.trim()}`);
  // Its status says this version once its image is checked, then running (or why not).
  type Status = {
    phase: string; error: string; version: string; startSeconds?: number; prepareSeconds?: number;
    memoryBytes?: number | string;
  };
  const statusNow = async () => {
    const r = await m.run(['get', 'extensionstatus', 'hello', '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.out) as { spec: Status }).spec : undefined;
  };
  const deadline = Date.now() + 300_000;
  let spec = await statusNow();
  while (!(spec?.version === `1.0.${i}` && ['running', 'failed', 'crashing'].includes(spec.phase))
    && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    spec = await statusNow();
  }
  const client = (performance.now() - t0) / 1000;
  if (!spec) throw new Error(`run ${i + 1}: no ExtensionStatus`);
  if (spec.phase !== 'running') throw new Error(`run ${i + 1}: the extension is ${spec.phase}: ${spec.error}`);
  const r: Run = {
    engine: spec.startSeconds ?? NaN, prepare: spec.prepareSeconds ?? NaN, client,
    memory: Number(spec.memoryBytes ?? NaN) / 2 ** 20, before, after: await usedMiB(),
  };
  results.push(r);
  log(`run ${i + 1}/${runs}: declared -> running ${r.engine.toFixed(2)} s (fetch and checks ${r.prepare.toFixed(2)} s, `
    + `client ${r.client.toFixed(2)} s), `
    + `its memory ${r.memory.toFixed(1)} MiB, machine ${r.before.toFixed(1)} -> ${r.after.toFixed(1)} MiB used`);
}
const line = (name: string, pick: (r: Run) => number, unit: string, digits: number) =>
  process.stdout.write(`  ${name.padEnd(44)} ${fmtStats(stats(results.map(pick)), unit, digits)}\n`);
process.stdout.write(`\nextension hello (Python, grpcio): ${runs} run(s), image `
  + `${(Object.values(images)[0]!.bytes / 2 ** 20).toFixed(1)} MiB, 384 MiB, TCG\n`);
line('declared -> running (engine)', (r) => r.engine, ' s', 2);
line('  fetch, hash, mount, checks, cgroup', (r) => r.prepare, ' s', 2);
line('  launcher and program start (to its ready line)', (r) => r.engine - r.prepare, ' s', 2);
line('declared -> running (client)', (r) => r.client, ' s', 2);
line('its memory (cgroup memory.current)', (r) => r.memory, ' MiB', 1);
line('machine used, before -> after (after)', (r) => r.after, ' MiB', 1);
line('  (before)', (r) => r.before, ' MiB', 1);
// The machine and the image server would keep this process alive: the 'exit' handlers above end them.
process.exit(0);
