// bench:appliance: what building and booting an appliance of one's own costs. The example project: the Python
// example plugin (plugins/examples/hello-python, its root from this host's Debian packages) as a prebuilt squashfs,
// a first-boot config naming its type, the run's CA as the secrets file. For each format: `appliance build` cold
// (a fresh out/, the system build cached) and warm (nothing changed), and the bytes the extension adds to that
// format's files (against the same appliance with no extension). Then the raw disk booted (SeaBIOS, 384 MiB, guest
// time counted in instructions, QEMU -icount): guest uptime at the payload declared, at the ready line, and at the
// baked program's first answer (its GreetingStatus), with the host's wall time for comparison.
//   --formats a,b   the formats (default raw,qcow2,iso,pxe,upgrade)
//   --no-boot       the builds only
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FORMATS } from '../image/formats/index.ts';
import { walkTree } from '../machinery/sys/walk-tree.ts';
import { bootApiMachine, TEST_CA_DOCUMENT } from '../qemu/api-machine.ts';
import { buildHelloImages, HELLO_MANIFEST } from '../qemu/extension-image.ts';
import { ICOUNT_ARGS } from '../qemu/launch.ts';
import { main as appliance } from './appliance.ts';
import { build } from './build.ts';
import { benchArgs } from './lib/bench-args.ts';

const args = benchArgs(
  'usage: npm run bench:appliance -- [--formats raw,qcow2,...] [--no-boot]\n\n'
    + 'Builds the example appliance (the Python example plugin baked in) per format, cold and warm, prints the\n'
    + 'bytes the extension adds to each, then boots its raw disk under -icount and prints guest uptime at the\n'
    + 'payload declared, the ready line and the baked program\'s first answer.\n',
);
const formats = args.list('--formats', FORMATS.map((f) => f.name), ['raw', 'qcow2', 'iso', 'pxe', 'upgrade']);
const boot = !process.argv.includes('--no-boot');
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
await build();
const dir = mkdtempSync(join(tmpdir(), 'bench-appliance-'));
let killVm: (() => void) | undefined;
process.on('exit', () => {
  killVm?.();
  rmSync(dir, { recursive: true, force: true });
});
const images = join(dir, 'images');
const hello = buildHelloImages(images, { hello: HELLO_MANIFEST() }).hello!;
writeFileSync(join(images, 'secrets.yaml'), TEST_CA_DOCUMENT());

/** A project folder declaring the appliance, with or without the extension. */
function project(name: string, withExtension: boolean, format: string): string {
  const p = join(dir, name);
  mkdirSync(p, { recursive: true });
  writeFileSync(join(p, 'appliance.yaml'), `apiVersion: appliance.dev/v1alpha1
kind: Appliance
name: bench
version: 1.0.0
${withExtension ? `extensions:\n  - name: hello\n    squashfs: ${hello.path}\n` : ''}config:
  - inline: |
      metadata: {type: motd, id: bench}
      spec: {text: benchmark}
secrets: ${join(images, 'secrets.yaml')}
formats: [${format}]
`);
  return p;
}

/** `appliance build` in `p`, its wall time in seconds; throws on failure. */
async function timedBuild(p: string): Promise<number> {
  const cwd = process.cwd();
  process.chdir(p);
  const t0 = performance.now();
  try {
    const code = await appliance(['build']);
    if (code !== 0) throw new Error(`appliance build in ${p}: exit ${code}`);
    return (performance.now() - t0) / 1000;
  } finally {
    process.chdir(cwd);
  }
}

/** The bytes of every file a build wrote into out/ (pxe/ counted whole; its cache and manifest not). */
function outBytes(p: string): number {
  let n = 0;
  walkTree(join(p, 'out'), (path, st) => {
    if (st.isFile() && !path.startsWith('.') && path !== 'manifest.json') n += st.size;
  });
  return n;
}

const rows: string[] = [];
const mb = (n: number) => (n / 1e6).toFixed(1);
for (const f of formats) {
  const p = project(`with-${f}`, true, f);
  const cold = await timedBuild(p);
  const warm = await timedBuild(p);
  const bare = project(`bare-${f}`, false, f);
  await timedBuild(bare);
  const added = outBytes(p) - outBytes(bare);
  rows.push(`${f.padEnd(8)} cold ${cold.toFixed(1).padStart(6)} s   warm ${warm.toFixed(1).padStart(5)} s   `
    + `files ${mb(outBytes(p)).padStart(7)} MB   the extension adds ${mb(added).padStart(6)} MB`);
  log(rows.at(-1)!);
}
process.stdout.write(`\nappliance build (the system build cached; the extension ${mb(hello.bytes)} MB):\n`);
for (const r of rows) process.stdout.write(`  ${r}\n`);

if (boot) {
  const p = project('boot', true, 'raw');
  await timedBuild(p);
  const disk = join(dir, 'boot.raw');
  execFileSync('cp', ['--sparse=always', join(p, 'out', 'appliance.raw'), disk]);
  const t0 = performance.now();
  const m = await bootApiMachine({
    bootFrom: 'disk', firmware: 'seabios', memoryMiB: 384, disks: [{ file: disk, format: 'raw' }],
    extraArgs: [...ICOUNT_ARGS],
  }, 'dhcp', { secrets: 'none' });
  killVm = () => m.vm.kill();
  const applied = await m.run(['apply', '-f', '-'], 'metadata: {type: greetings, id: world}\nspec: {name: world}\n');
  if (applied.code !== 0) throw new Error(`declaring a Greeting: ${applied.err.trim()}`);
  await m.poll(['get', 'greetingstatus', 'world'], /hello, world/, 300_000);
  const wall = (performance.now() - t0) / 1000;
  const uptimeOf = (re: RegExp) =>
    Number(new RegExp(`\\[init ([\\d.]+)\\][^\\n]*${re.source}`).exec(m.vm.console())?.[1]);
  const declared = uptimeOf(/bench 1\.0\.0 from slot A: 1 extension/);
  const ready = Number(/APPLIANCE READY uptime=([\d.]+)s/.exec(m.vm.console())?.[1]);
  const running = uptimeOf(/engine\/plugin\/hello: watching Greetings/);
  process.stdout.write(`\nfirst boot of the raw disk (SeaBIOS, 384 MiB, guest time under -icount):\n`
    + `  payload declared  ${declared.toFixed(2)} s\n  ready line        ${ready.toFixed(2)} s\n`
    + `  program watching  ${running.toFixed(2)} s (the baked program serving its type)\n`
    + `  host wall time to its first answer: ${wall.toFixed(1)} s (TCG)\n`);
}
