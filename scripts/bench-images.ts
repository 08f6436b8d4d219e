// bench:images: what each image format costs: the time to build all formats, each artifact's
// size (and, for sparse files, what it takes on disk), and boot-to-ready per format and firmware
// under QEMU (TCG): the guest's uptime at the ready line (from the kernel's start) and the host's
// wall time from QEMU's start (firmware, loader and kernel loading included).
//   --runs N          boots per case (default 1)
//   --cases a,b       which boots (default all)
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_RE, parseReady } from '../init/boot/ready-line.ts';
import { buildImages, type ImageArtifact } from '../image/images.ts';
import { FORMATS } from '../image/formats/index.ts';
import { artifacts } from '../qemu/artifacts.ts';
import { launch, type Disk, type VmOptions } from '../qemu/launch.ts';
import { build } from './build.ts';
import { benchArgs } from './lib/bench-args.ts';
import { fmtStats, stats } from './lib/stats.ts';

type Firmware = 'seabios' | 'ovmf';
interface BootCase {
  /** The image (or, for PXE, the folder) relative to the output folder. */
  file: (a: ImageArtifact[]) => string;
  firmware: Firmware;
  disk?: Disk['interface'];
  pxe?: boolean;
}

const fileOf = (format: string, suffix = '') => (a: ImageArtifact[]) =>
  a.find((x) => x.format === format && x.file.endsWith(suffix))!.file;
const CASES: Record<string, BootCase> = {
  'raw/seabios': { file: fileOf('raw'), firmware: 'seabios' },
  'raw/ovmf': { file: fileOf('raw'), firmware: 'ovmf' },
  'qcow2/ovmf': { file: fileOf('qcow2'), firmware: 'ovmf' },
  'iso-cdrom/seabios': { file: fileOf('iso'), firmware: 'seabios', disk: 'cdrom' },
  'iso-cdrom/ovmf': { file: fileOf('iso'), firmware: 'ovmf', disk: 'cdrom' },
  'iso-usb/seabios': { file: fileOf('iso'), firmware: 'seabios', disk: 'usb' },
  'iso-usb/ovmf': { file: fileOf('iso'), firmware: 'ovmf', disk: 'usb' },
  'aws-nvme/ovmf': { file: fileOf('aws', '.raw'), firmware: 'ovmf', disk: 'nvme' },
  'gce-scsi/ovmf': { file: () => 'gce/disk.raw', firmware: 'ovmf', disk: 'scsi' },
  'pxe/seabios': { file: () => 'pxe', firmware: 'seabios', pxe: true },
  'pxe/ovmf': { file: () => 'pxe', firmware: 'ovmf', pxe: true },
};
const ALL = Object.keys(CASES);

const args = benchArgs(
  'usage: npm run bench:images -- [--runs N] [--cases a,b,...]\n\n'
    + 'Builds every image format, prints each artifact\'s size and the build time, then boots each case\n'
    + '(QEMU, TCG, 320 MiB) and prints the guest uptime and the host time at the ready line.\n'
    + `Cases: ${ALL.join(', ')}\n`,
);
const runs = args.int('--runs', 1);
const cases = args.list('--cases', ALL, ALL);

const b = await build();
const a = artifacts();
const dir = mkdtempSync(join(tmpdir(), 'bench-images-'));
const t0 = performance.now();
const built = await buildImages({
  formats: FORMATS, inputs: { kernel: b.kernel, initramfs: b.initramfs, cmdline: a.cmdline, diskForm: a.disk },
  release: { version: 'bench', commit: 'bench' },
  signingKey: () => ({ privateKey: generateKeyPairSync('ed25519').privateKey, description: 'a throwaway key' }),
  outDir: dir, seed: 'bench', epoch: 0, progress: () => {},
});
const buildSeconds = (performance.now() - t0) / 1000;
mkdirSync(join(dir, 'gce'));
execFileSync('tar', ['-xzf', join(dir, fileOf('gce')(built)), '-C', join(dir, 'gce')]);

process.stdout.write(`\nimages: all ${FORMATS.length} formats built in ${buildSeconds.toFixed(1)} s\n`);
for (const x of built) {
  const st = statSync(join(dir, x.file));
  const onDisk = st.blocks * 512;
  process.stdout.write(`  ${x.format.padEnd(8)} ${x.file.padEnd(34)} ${(x.size / 1e6).toFixed(1).padStart(7)} MB`
    + `${onDisk < x.size * 0.9 ? `  (${(onDisk / 1e6).toFixed(1)} MB on disk, sparse)` : ''}\n`);
}

const vms: { kill(): void }[] = [];
process.on('exit', () => {
  for (const v of vms) v.kill();
});
const results: Record<string, { guest: number; host: number }[]> = {};
for (const name of cases) {
  const c = CASES[name]!;
  results[name] = [];
  for (let i = 0; i < runs; i++) {
    const target = join(dir, c.file(built));
    const copy = join(dir, `boot-${i}.img`);
    if (!c.pxe) execFileSync('cp', ['--sparse=always', target, copy]);
    const vm: VmOptions = {
      kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline, memoryMiB: 320, firmware: c.firmware,
      ...(c.pxe ? { bootFrom: 'network', tftp: { dir: target, bootfile: 'boot.ipxe' } }
        : { bootFrom: 'disk', disks: [{ file: copy, format: target.endsWith('.qcow2') ? 'qcow2' : 'raw',
          ...(c.disk ? { interface: c.disk } : {}) }] }),
    };
    const started = performance.now();
    const v = launch(vm);
    vms.push(v);
    const ready = parseReady((await v.waitFor(READY_RE, 300_000))[0]);
    const host = (performance.now() - started) / 1000;
    v.kill();
    await v.exited;
    if (!ready) throw new Error(`${name}: unparsable ready line`);
    results[name].push({ guest: ready.uptime, host });
    process.stderr.write(`[bench] ${name} run ${i + 1}/${runs}: ready at ${ready.uptime.toFixed(2)} s guest, `
      + `${host.toFixed(2)} s host\n`);
  }
}

const width = Math.max(...cases.map((s) => s.length));
process.stdout.write(`\nboot to ready: ${runs} run(s) per case, 320 MiB, TCG\n`);
for (const name of cases) {
  const r = results[name]!;
  process.stdout.write(`  ${name.padEnd(width)}  guest ${fmtStats(stats(r.map((x) => x.guest)))}`
    + `   host ${fmtStats(stats(r.map((x) => x.host)))}\n`);
}
