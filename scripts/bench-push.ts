// bench:push: the edit-to-running loop, timed. `appliance init`'s project (hello-web, a static web server, and its
// page) with a file of incompressible bytes beside the page making its image about 10 MB, built as a raw disk and
// booted (SeaBIOS, 384 MiB, TCG: the target is stated in wall time); then, for each run, the page edited and
// `appliance push hello` timed: the build of the changed extension, the upload, and from the push's start until the
// machine says the new process runs; the page then fetched through a forwarded port to see the new one served.
//   --runs N     pushes timed (default 3)
//   --mib N      the incompressible file's size (default 9: with the program and squashfs, a 10 MB image)
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { bootApiMachine, TEST_CA_DOCUMENT } from '../qemu/api-machine.ts';
import { freePort } from '../qemu/free-port.ts';
import { applianceIn } from './lib/appliance-in.ts';
import { build } from './build.ts';
import { benchArgs } from './lib/bench-args.ts';

const args = benchArgs(
  'usage: npm run bench:push -- [--runs N] [--mib N]\n\n'
    + 'Boots `appliance init`\'s project with a 10 MB extension and times `appliance push` of an edited page: the\n'
    + 'build, the upload, and push-to-running (target: at most 5 s under TCG).\n',
);
const runs = args.int('--runs', 3);
const mib = args.int('--mib', 9);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
await build();
const dir = mkdtempSync(join(tmpdir(), 'bench-push-'));
let killVm: (() => void) | undefined;
process.on('exit', () => {
  killVm?.();
  rmSync(dir, { recursive: true, force: true });
});

const run = applianceIn;

const project = join(dir, 'bench');
if ((await run(dir, 'init', project)).code !== 0) throw new Error('appliance init failed');
// The test CA, so that the harness's cosictl reaches the machine; one disk format.
writeFileSync(join(project, 'secrets.yaml'), TEST_CA_DOCUMENT());
const definition = YAML.parse(readFileSync(join(project, 'appliance.yaml'), 'utf8')) as Record<string, unknown>;
writeFileSync(join(project, 'appliance.yaml'), YAML.stringify({ ...definition, formats: ['raw'] }));
writeFileSync(join(project, 'hello', 'www', 'blob.bin'), randomBytes(mib << 20));
const page = (n: number) => `<h1>push ${n}</h1>\n`;
writeFileSync(join(project, 'hello', 'www', 'index.html'), page(0));
const built = await run(project, 'build');
if (built.code !== 0) throw new Error(`appliance build: exit ${built.code}`);
const disk = join(dir, 'boot.raw');
execFileSync('cp', ['--sparse=always', join(project, 'out', 'appliance.raw'), disk]);
const webPort = await freePort();
const m = await bootApiMachine({
  bootFrom: 'disk', firmware: 'seabios', memoryMiB: 384, disks: [{ file: disk, format: 'raw' }],
  hostfwd: [{ hostPort: webPort, guestPort: 8080 }],
}, 'dhcp', { secrets: 'none' });
killVm = () => m.vm.kill();
await m.poll(['get', 'extensionstatus', 'hello', '-o', 'json'], /"phase": "running"/, 300_000);
const served = async () => (await fetch(`http://127.0.0.1:${webPort}/`, { signal: AbortSignal.timeout(5000) }))
  .text();

const rows: { build: number; upload: number; running: number; total: number; bytes: number }[] = [];
for (let i = 1; i <= runs; i++) {
  writeFileSync(join(project, 'hello', 'www', 'index.html'), page(i));
  const t0 = performance.now();
  const r = await run(project, 'push', 'hello', '--config', m.cosictlConfig);
  const total = (performance.now() - t0) / 1000;
  const said = / \(sha256 [0-9a-f]{12}, ([\d.]+) MB\) running ([\d.]+) s after the push began \(upload ([\d.]+) s\)/
    .exec(r.out);
  if (r.code !== 0 || !said) throw new Error(`appliance push: exit ${r.code}: ${r.out}`);
  const [mb, running, upload] = [Number(said[1]), Number(said[2]), Number(said[3])];
  const got = await served();
  if (!got.includes(`push ${i}`)) throw new Error(`push ${i}: the machine serves ${JSON.stringify(got)}`);
  rows.push({ build: total - running, upload, running, total, bytes: mb });
  log(`push ${i}: ${mb} MB; build ${(total - running).toFixed(1)} s, upload ${upload.toFixed(1)} s, `
    + `push to running ${running.toFixed(1)} s`);
}
// Where the last push's time went, as the machine's engine logged it.
const engine = (await m.run(['logs', 'engine'])).out.split('\n');
const from = engine.findLastIndex((l) => / extension hello: pushed /.test(l));
const steps = engine.slice(from).filter((l) => /extension hello: /.test(l)).slice(0, 6);
process.stdout.write(`\nthe machine's engine, the last push (its clock):\n${steps.map((l) => `  ${l}\n`).join('')}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
process.stdout.write(`\nappliance push of a ${rows[0]!.bytes} MB extension (hello-web and a page), ${runs} runs, `
  + 'TCG wall time, median:\n'
  + `  build of the changed extension  ${median(rows.map((r) => r.build)).toFixed(2)} s\n`
  + `  upload                          ${median(rows.map((r) => r.upload)).toFixed(2)} s\n`
  + `  push to the new process running ${median(rows.map((r) => r.running)).toFixed(2)} s (target <= 5 s)\n`
  + `  the whole command               ${median(rows.map((r) => r.total)).toFixed(2)} s\n`);
process.exit(0); // the machine is stopped on exit
