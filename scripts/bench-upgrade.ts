// bench:upgrade: what an A/B upgrade through the API costs on the installed disk under QEMU (TCG).
// It builds another version (a variant build at the release's zstd level, so the bundle has a
// release's size), its signed upgrade bundle (the image registry's `upgrade` format) and the raw
// disk of this build, boots the disk and upgrades it, each run into the slot not running (A->B,
// B->A, ...). Per run: the upload, checks and slot write (the CLI's `cosictl upgrade`), the reboot to
// the new version's ready line, and from there to the version marking itself good (health held 15 s);
// the bytes sent, staged on /var and written to the slot and its SYSTEM partition (the disk form: the image
// decompressed onto it).
//   --runs N               upgrades in a row (default 2)
//   --firmware ovmf|seabios  (default ovmf)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_RE, parseReady } from '../init/boot/ready-line.ts';
import { buildImages } from '../image/images.ts';
import { FORMATS } from '../image/formats/index.ts';
import { UPGRADE_BUNDLE } from '../image/formats/upgrade.ts';
import { bootApiMachine } from '../qemu/api-machine.ts';
import { artifacts } from '../qemu/artifacts.ts';
import { build, signingKeyOf } from './build.ts';
import { benchArgs } from './lib/bench-args.ts';
import { fmtStats, stats } from './lib/stats.ts';

const FIRMWARES = ['ovmf', 'seabios'] as const;
const args = benchArgs(
  'usage: npm run bench:upgrade -- [--runs N] [--firmware ovmf|seabios]\n\n'
    + 'Builds another version and its signed upgrade bundle, boots this build\'s raw disk (QEMU, TCG, 320 MiB)\n'
    + 'and upgrades it N times (default 2), each into the slot not running. Prints per run and as medians:\n'
    + 'upload+check+write, reboot to the new version\'s ready line, ready to marked good (health held 15 s),\n'
    + 'the total, and the bytes sent, staged on /var and written to the slot.\n',
);
const runs = args.int('--runs', 2);
const firmware = args.list('--firmware', FIRMWARES, ['ovmf'])[0] as typeof FIRMWARES[number];
const NEW_VERSION = '9.0.0';

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const b = await build();
const a = artifacts();
const release = JSON.parse(readFileSync(b.manifest, 'utf8')) as { version: string; commit: string };
const dir = mkdtempSync(join(tmpdir(), 'bench-upgrade-'));
let machine: { vm: { kill(): void } } | undefined;
process.on('exit', () => {
  machine?.vm.kill();
  rmSync(dir, { recursive: true, force: true });
});
log(`building version ${NEW_VERSION} (zstd 19, as a release) ...`);
const next = await build({ variant: { outDir: join(dir, 'next'), version: NEW_VERSION, zstdLevel: 19 } });
const common = { signingKey: () => signingKeyOf(), seed: 'bench-upgrade', epoch: 0, progress: () => {} };
const [raw] = await buildImages({ ...common, formats: FORMATS.filter((f) => f.name === 'raw'),
  inputs: { kernel: b.kernel, initramfs: b.initramfs, cmdline: a.cmdline, diskForm: a.disk }, release,
  outDir: join(dir, 'disk') });
await buildImages({ ...common, formats: FORMATS.filter((f) => f.name === 'upgrade'),
  inputs: { kernel: next.kernel, initramfs: next.initramfs, cmdline: a.cmdline, diskForm: next.diskForm },
  release: { version: NEW_VERSION, commit: release.commit }, outDir: join(dir, 'bundle') });
const bundle = join(dir, 'bundle', UPGRADE_BUNDLE);
const bundleBytes = statSync(bundle).size;
// A disk with SYSTEM partitions stages the disk form's parts: the kernel, the initramfs that finds the image, the
// image.
const partBytes = [next.kernel, next.diskForm.initramfs, next.diskForm.compressedImage]
  .reduce((n, f) => n + statSync(f).size, 0);
const disk = join(dir, 'disk.raw');
execFileSync('cp', ['--sparse=always', join(dir, 'disk', raw!.file), disk]);
execFileSync('truncate', ['-s', '1G', disk]); // EPHEMERAL grows at first boot: room on /var to stage the bundle

log(`booting the ${release.version} disk under ${firmware} ...`);
const m = await bootApiMachine({ bootFrom: 'disk', firmware, memoryMiB: 320, noReboot: false,
  disks: [{ file: disk, format: 'raw' }] }, 'dhcp');
machine = m;
interface Run { write: number; reboot: number; guestReady: number; good: number; total: number; sent: number;
  written: number }
const results: Run[] = [];
const seconds = (from: number) => (performance.now() - from) / 1000;
for (let i = 0; i < runs; i++) {
  const id = `bench-${i + 1}`;
  const t0 = performance.now();
  const up = await m.run(['upgrade', '--image', bundle, '--id', id, '--health-timeout', '5m'], undefined, 600_000);
  if (up.code !== 0) throw new Error(`run ${i + 1}: cosictl upgrade failed: ${up.err.trim()}`);
  const write = seconds(t0);
  // The first boot printed ready line #1; run i's new version prints #(i + 2).
  const ready = parseReady((await m.vm.waitFor(READY_RE, 600_000, i + 2))[0])!;
  const reboot = seconds(t0) - write;
  const guestReady = ready.uptime;
  const done = await m.poll(['get', 'upgradestatus', id, '-o', 'json'], /"phase": "(done|failed)"/, 600_000);
  const status = (JSON.parse(done.out) as { spec: { phase: string; error: string; bytesReceived: string | number;
    bytesWritten: string | number } }).spec;
  if (status.phase !== 'done') throw new Error(`run ${i + 1}: the upgrade ${status.phase}: ${status.error}`);
  const total = seconds(t0);
  const r = { write, reboot, guestReady, good: total - write - reboot, total, sent: Number(status.bytesReceived),
    written: Number(status.bytesWritten) };
  results.push(r);
  log(`run ${i + 1}/${runs}: write ${r.write.toFixed(1)} s, reboot to ready ${r.reboot.toFixed(1)} s `
    + `(guest ${r.guestReady.toFixed(2)} s), to good ${r.good.toFixed(1)} s, total ${r.total.toFixed(1)} s`);
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const line = (name: string, pick: (r: Run) => number) =>
  process.stdout.write(`  ${name.padEnd(44)} ${fmtStats(stats(results.map(pick)), ' s', 1)}\n`);
process.stdout.write(`\nupgrade ${release.version} -> ${NEW_VERSION}: ${runs} run(s), ${firmware}, 320 MiB, TCG\n`);
line('upload, check, stage, write slot (cosictl)', (r) => r.write);
line('reboot to the new version\'s ready line', (r) => r.reboot);
line('  (the ready line\'s guest uptime)', (r) => r.guestReady);
line('ready to marked good (health held 15 s)', (r) => r.good);
line('request to new version ready', (r) => r.write + r.reboot);
line('request to marked good', (r) => r.total);
const last = results.at(-1)!;
process.stdout.write(`  bundle ${mb(bundleBytes)}; sent ${mb(last.sent)}; staged on /var ${mb(partBytes)}; `
  + `written to the slot and its SYSTEM partition ${mb(last.written)}; written in all `
  + `${mb(partBytes + last.written)}\n`);
