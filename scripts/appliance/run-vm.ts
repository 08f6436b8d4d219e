// run-vm: `appliance run`'s machine. The built disk image booted in QEMU as a user's VM has it (UEFI, QEMU's default
// devices), its console on this terminal. It writes to a qcow2 of its own on top of the image (out/run/disk.qcow2),
// made anew when the image changed: the image stays as built (its sha256 in out/manifest.json stays true) and what
// the machine keeps lasts from one run to the next. The API and the definition's forwards come from 127.0.0.1.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { contextOfSecrets, writeConfigFile } from '../../cli/config.ts';
import type { ApplianceDefinition } from '../../image/appliance/definition.ts';
import type { ImageArtifact } from '../../image/images.ts';
import { secretsFromYaml } from '../../machinery/pki/secrets.ts';
import { freePort, portFree } from '../../qemu/free-port.ts';
import { launch, type PortForward } from '../../qemu/launch.ts';
import { untilPoweredOff } from '../lib/interactive-vm.ts';

export const DISK_FORMATS = ['qcow2', 'raw'] as const;
export type DiskFormat = (typeof DISK_FORMATS)[number];

/** The API's port on the machine, and the one asked for on this computer. */
const API_PORT = 50000;

export interface RunOptions { format: DiskFormat; fresh: boolean; memoryMiB: number; cosictl: string }

/** `wanted`, or another free port when it is taken (said on stderr). */
async function hostPortFor(wanted: number, what: string): Promise<number> {
  if (await portFree(wanted)) return wanted;
  const other = await freePort();
  process.stderr.write(`[run] 127.0.0.1:${wanted} is taken: ${what} is on 127.0.0.1:${other} instead\n`);
  return other;
}

/** Boots the definition's built `o.format` image until it powers off; QEMU's exit code. */
export async function runAppliance(d: ApplianceDefinition, o: RunOptions): Promise<number> {
  const outDir = join(dirname(d.file), 'out');
  const manifestFile = join(outDir, 'manifest.json');
  const images = existsSync(manifestFile)
    ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as { images: ImageArtifact[] }).images : [];
  const image = images.find((i) => i.format === o.format);
  if (!image || !existsSync(join(outDir, image.file))) {
    process.stderr.write(`appliance run: out/ holds no ${o.format} image: appliance build --format ${o.format}\n`);
    return 1;
  }
  const runDir = join(outDir, 'run');
  mkdirSync(runDir, { recursive: true });
  const disk = join(runDir, 'disk.qcow2');
  const baseRecord = join(runDir, 'base.sha256');
  const sameBase = existsSync(disk) && existsSync(baseRecord) && readFileSync(baseRecord, 'utf8') === image.sha256;
  if (o.fresh || !sameBase) {
    rmSync(disk, { force: true });
    // The image by its absolute path: the overlay is read from wherever QEMU runs.
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', o.format === 'raw' ? 'raw' : 'qcow2',
      '-b', join(outDir, image.file), disk], { stdio: ['ignore', 'ignore', 'pipe'] });
    writeFileSync(baseRecord, image.sha256);
    process.stderr.write(`[run] ${relative(process.cwd(), disk)}: a new disk on ${image.file} `
      + `(${d.name} ${d.version}, sha256 ${image.sha256.slice(0, 12)})\n`);
  } else {
    process.stderr.write(`[run] ${relative(process.cwd(), disk)}: the last run's disk, kept (--fresh for a new one)\n`);
  }

  const hostfwd: PortForward[] = [];
  const apiPort = await hostPortFor(API_PORT, 'the API');
  hostfwd.push({ hostPort: apiPort, guestPort: API_PORT });
  for (const f of d.run.forward) {
    const port = await hostPortFor(f.hostPort, `the machine's ${f.guestPort}`);
    hostfwd.push({ hostPort: port, guestPort: f.guestPort });
    process.stderr.write(`[run] 127.0.0.1:${port} -> the machine's port ${f.guestPort}\n`);
  }
  if (d.secrets?.apiSecrets) {
    const context = join(runDir, 'cosictl.yaml');
    const secrets = secretsFromYaml(readFileSync(d.secrets.file, 'utf8'), d.secrets.file);
    writeConfigFile(context, { context: d.name, contexts: { [d.name]: contextOfSecrets(secrets, 'admin',
      `127.0.0.1:${apiPort}`) } });
    process.stderr.write(`[run] the API on 127.0.0.1:${apiPort}: COSICTL_CONFIG=${relative(process.cwd(), context)} `
      + `${o.cosictl} get extensionstatus\n`);
  } else {
    process.stderr.write(`[run] the API on 127.0.0.1:${apiPort} (the secrets file is not cosictl gen secrets's: `
      + 'use a cosictl context of your own)\n');
  }
  const vm = launch({
    kernel: '', initrd: '', cmdline: '', bootFrom: 'disk', firmware: 'ovmf', defaults: true,
    memoryMiB: o.memoryMiB, disks: [{ file: disk, format: 'qcow2' }], hostfwd, consoleToTerminal: true,
    consoleFile: join(runDir, 'console.log'),
    hostAccess: true, // the person's own machine may reach their network
    noReboot: false, // upgrades and `cosictl reboot` restart it in place
  });
  process.stderr.write(`[run] QEMU pid ${vm.process.pid}; console also in ${relative(process.cwd(),
    join(runDir, 'console.log'))}; Ctrl-C powers off\n`);
  return untilPoweredOff(vm, 'run');
}
