// bench:config: how long after the API is ready the machine config is applied, per source.
// Boots the image under QEMU (TCG) once per source and run, with the
// config handed over the way that source does (a STATE disk, the command line, fw_cfg,
// NoCloud and config-drive volumes, a seed URL, EC2's IMDSv2 and GCE's metadata server on
// loopback through slirp), and reads both moments from the console's uptime stamps. The
// address is given with ip= (slirp names no router when it keeps the guest to loopback).
//   --runs N          boots per source (default 3)
//   --sources a,b     which sources (default all)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { READY_RE, parseReady } from '../init/boot/ready-line.ts';
import { artifacts } from '../qemu/artifacts.ts';
import {
  CLOUD_NET, isoSeed, METADATA_ADDR, SEED_ADDR, stateDisk, vfatSeed,
} from '../qemu/config-seeds.ts';
import { launch, slirpStaticIp, type VmOptions } from '../qemu/launch.ts';
import {
  files, gceMetadata, GCE_VALUES, imds, notFound, startServer, type Handler,
} from '../plugins/platform/testing/metadata-servers.ts';
import { build } from './build.ts';
import { benchArgs } from './lib/bench-args.ts';
import { fmtStats, stats } from './lib/stats.ts';

interface SourceCase {
  /** Extra VM options that hand the config over. */
  vm: Partial<VmOptions>;
  /** What the metadata or seed server on loopback answers. */
  handler?: Handler;
  /** The console line that says this source's config was applied. */
  applied: RegExp;
}

const configOf = (source: string) => `metadata: {type: motd, id: bench}\nspec: {text: "config from ${source}"}\n`;
const at = (source: string) => new RegExp(`\\[init ([\\d.]+)\\] [^\\n]*config from ${source}[^\\n]* applied`);

const CASES: Record<string, (dir: string, port: number) => SourceCase> = {
  state: (dir) => ({
    vm: { disks: [{ file: stateDisk(dir, 'state', {
      text: configOf('state'), source: 'api', savedAt: '2026-01-01T00:00:00Z',
    }), format: 'raw' }] },
    applied: /\[init ([\d.]+)\] [^\n]*persisted config from [^\n]* applied/,
  }),
  'cmdline-inline': () => ({
    vm: { append: [`appliance.config.inline=${gzipSync(configOf('cmdline')).toString('base64')}`] },
    applied: at('cmdline-inline'),
  }),
  'cmdline-url': (_dir, port) => ({
    vm: { append: [`appliance.config=http://${SEED_ADDR.guestAddr}/machine.yaml`],
      guestfwd: [{ ...SEED_ADDR, hostPort: port }] },
    handler: files({ '/machine.yaml': configOf('url') }),
    applied: at('cmdline-url'),
  }),
  'fw-cfg': (dir) => {
    const file = join(dir, 'fwcfg.yaml');
    writeFileSync(file, configOf('fw-cfg'));
    return { vm: { fwcfg: [{ name: 'opt/dev.appliance/config', file }] }, applied: at('fw-cfg') };
  },
  'nocloud-iso': (dir) => ({
    vm: { disks: [{ file: isoSeed(dir, 'cidata', 'cidata', {
      'meta-data': 'instance-id: iid-bench\n', 'user-data': configOf('nocloud'),
    }), interface: 'cdrom' }] },
    applied: at('nocloud'),
  }),
  'nocloud-vfat': (dir) => ({
    vm: { disks: [{ file: vfatSeed(dir, 'cidata-vfat', 'CIDATA', {
      'meta-data': 'instance-id: iid-bench\n', 'user-data': configOf('nocloud'),
    }), format: 'raw' }] },
    applied: at('nocloud'),
  }),
  'nocloud-net': (_dir, port) => ({
    vm: { smbios: [`type=1,serial=ds=nocloud-net;s=http://${SEED_ADDR.guestAddr}/seed/`],
      guestfwd: [{ ...SEED_ADDR, hostPort: port }] },
    handler: files({ '/seed/meta-data': 'instance-id: iid-bench\n', '/seed/user-data': configOf('nocloud-net') }),
    applied: at('nocloud'),
  }),
  openstack: (dir) => ({
    vm: { disks: [{ file: isoSeed(dir, 'config-2', 'config-2', {
      'openstack/latest/meta_data.json': JSON.stringify({ uuid: 'os-bench' }),
      'openstack/latest/user_data': configOf('openstack'),
    }), interface: 'cdrom' }] },
    applied: at('openstack'),
  }),
  ec2: (_dir, port) => ({
    vm: { slirpNet: CLOUD_NET, guestfwd: [{ ...METADATA_ADDR, hostPort: port }],
      smbios: ['type=1,manufacturer=Amazon EC2,product=t3.small'] },
    handler: imds({ userData: configOf('ec2') }),
    applied: at('ec2'),
  }),
  gce: (_dir, port) => ({
    vm: { slirpNet: CLOUD_NET, guestfwd: [{ ...METADATA_ADDR, hostPort: port }],
      smbios: ['type=1,manufacturer=Google,product=Google Compute Engine'] },
    handler: gceMetadata({ ...GCE_VALUES, 'attributes/user-data': configOf('gce') }),
    applied: at('gce'),
  }),
};
const ALL = Object.keys(CASES);

const args = benchArgs(
  'usage: npm run bench:config -- [--runs N] [--sources a,b,...]\n\n'
    + 'Boots the appliance once per source and run (QEMU, TCG, ip=) and prints the guest uptime at which the API\n'
    + `is ready and the machine config is applied, per source.\nSources: ${ALL.join(', ')}\n`,
);
const runs = args.int('--runs', 3);
const sources = args.list('--sources', ALL, ALL);

await build();
const a = artifacts();
const dir = mkdtempSync(join(tmpdir(), 'bench-config-'));
const server = await startServer();
const vms: { kill(): void }[] = [];
process.on('exit', () => {
  for (const v of vms) v.kill();
  server.close();
});

interface Run { ready: number; applied: number }
const results: Record<string, Run[]> = {};
for (const source of sources) {
  results[source] = [];
  for (let i = 0; i < runs; i++) {
    const c = CASES[source]!(dir, server.port);
    server.handler = c.handler ?? notFound;
    const vm = launch({
      kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline, memoryMiB: 320, ...c.vm,
      append: [slirpStaticIp(c.vm.slirpNet), ...(c.vm.append ?? [])],
    });
    vms.push(vm);
    const ready = parseReady((await vm.waitFor(READY_RE, 180_000))[0]);
    if (!ready) throw new Error(`${source}: unparsable ready line`);
    const applied = Number((await vm.waitFor(c.applied, 180_000).catch((e: Error) => {
      throw new Error(`${source} run ${i + 1}: the config was not applied: ${e.message}`);
    }))[1]);
    vm.kill();
    await vm.exited;
    results[source].push({ ready: ready.uptime, applied });
    process.stderr.write(`[bench] ${source} run ${i + 1}/${runs}: ready at ${ready.uptime.toFixed(3)}s, `
      + `config applied at ${applied.toFixed(3)}s (+${(applied - ready.uptime).toFixed(3)}s)\n`);
  }
}

const width = Math.max(...sources.map((s) => s.length));
process.stdout.write(`\nconfig benchmark: ${runs} run(s) per source, 320 MiB, TCG, ip=; guest uptime\n`);
for (const source of sources) {
  const r = results[source]!;
  process.stdout.write(`  ${source.padEnd(width)}  ready->applied ${fmtStats(stats(r.map((x) => x.applied - x.ready)))}`
    + `   applied at median ${stats(r.map((x) => x.applied)).median.toFixed(3)}s\n`);
}
server.close(); // the metadata server would keep the process alive
