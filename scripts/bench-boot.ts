// bench:boot: boots the system as the disk images ship it (the disk form: its initramfs holds stage0, which
// mounts the system image from a disk, here a virtio disk as SYSTEM-A would be) N times under QEMU (TCG) and
// prints where the time and memory go, next to a trivial static init on the same kernel (the floor): init exec,
// JS main, API ready, and the milestones PID 1 prints after it (every plugin running, the network
// configured: DHCP bound on eth0 and its default route), each also as a ratio of the floor. Then,
// per run, two boots with a machine config: given by fw_cfg onto a blank STATE disk (which persists
// it), and the same disk again without fw_cfg (the config read back from STATE); each to its "config"
// milestone (the config applied, its address on eth0). A second floor: the runtime's own start, a two-line program
// as PID 1 made like ours (qemu/floor/build-runtime-floor.ts), which then spawns itself as plugins are spawned (one
// alone, five at once) and reads used memory with the five idle: what of each milestone is Node's and what is ours.
// And the same build as a live system boots (ISO, PXE: its image in the initramfs, decompressed) to the same
// milestones. The floors' machines have the same disk attached, so that its probe is in every figure.
// Guest time is counted in instructions executed (qemu/launch.ts ICOUNT_ARGS: 1 ns each, a 1 GIPS CPU): the same
// figures on a loaded host up to API ready, so one run compares two builds there. Later milestones wait on answers
// in host time too (DHCP through slirp, the disks): two runs of one image differed there by up to 0.23 s and 7 MiB,
// so a change smaller than that needs --runs 3. The budgets printed are issue 36's.
//   --runs N     boots of each (default 3)
//   --memory M   guest memory in MiB (default 256)
//   --wall       plain TCG instead: guest time runs with the host's clock (for comparison; noisy on a busy host)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  READY_RE, milestoneLine, parseMeminfoLine, parseMilestones, parseProcesses, parseReady, type ReadyFigures,
} from '../init/boot/ready-line.ts';
import type { ProcessCost } from '../init/boot/process-cost.ts';
import { artifacts } from '../qemu/artifacts.ts';
import { buildFloorInitramfs } from '../qemu/floor/build-floor.ts';
import { buildRuntimeFloorInitramfs } from '../qemu/floor/build-runtime-floor.ts';
import {
  parseRuntimeFloorChildren, RUNTIME_IDLE_RE, RUNTIME_READY_RE, type RuntimeFloorChildren,
} from './lib/runtime-floor-lines.ts';
import { nodeRuntime } from './runtime.ts';
import { ICOUNT_ARGS, launch, type FwCfg } from '../qemu/launch.ts';
import { build } from './build.ts';
import { BUILD, OUT } from './lib/paths.ts';
import { benchArgs } from './lib/bench-args.ts';
import { fmtStats, stats, type Stats } from './lib/stats.ts';
import { bootChartSvg, bootTimeline } from './lib/boot-chart.ts';
import { MEMTRACE_PARAM } from '../init/boot/memory-trace.ts';
import { INITRAMFS_LIMIT_BYTES } from '../image/initramfs.ts';

const args = benchArgs(
  'usage: npm run bench:boot -- [--runs N] [--memory MiB] [--wall]\n\n'
    + 'Boots the appliance N times (and a static init N times as the floor), then twice per run with a machine\n'
    + 'config (from fw_cfg onto a blank STATE disk, then from that disk), and once as a live system (its image\n'
    + 'in the initramfs, as the ISO and PXE boot); prints boot figures. The appliance boots as the disk images\n'
    + 'ship it: its system image read uncompressed from a disk (the disk form).\n'
    + 'Guest time counts instructions executed (QEMU -icount), deterministic on a loaded host.\n'
    + '--wall: guest time by the host\'s clock instead (plain TCG), for comparison.\n',
);
const icount = !process.argv.includes('--wall');
/** Each boot's QEMU: the deterministic clock unless --wall. */
const clock = icount ? { extraArgs: [...ICOUNT_ARGS] } : {};
const runs = args.int('--runs', 3);
const memoryMiB = args.int('--memory', 256);

const fmt = fmtStats;
/** Issue 36's: used memory with the network up and every plugin running, on a 256 MiB machine. */
const MEMORY_BUDGET_MIB = 128;

const built = await build();
const a = artifacts();
const floorInitrd = await buildFloorInitramfs(join(BUILD, 'floor'));
const runtime = await nodeRuntime();
const runtimeInitrd = await buildRuntimeFloorInitramfs(join(BUILD, 'floor'),
  { node: runtime.node, version: runtime.version, addon: built.addon });

// Whatever happens, no VM outlives the benchmark.
const vms: { kill(): void }[] = [];
process.on('exit', () => {
  for (const v of vms) v.kill();
});
const ours: (ReadyFigures & { wall: number; plugins: number; network: number; upMemKiB: number })[] = [];
const floor: { uptime: number; wall: number }[] = [];
/** The same build as a live system: its image in the initramfs (the ISO's and PXE's form). */
const live: { ready: number; network: number; plugins: number; upMemKiB: number }[] = [];
/** The runtime's own start: a two-line program as PID 1, made like ours (qemu/floor/build-runtime-floor.ts). */
const runtimeFloor: number[] = [];
/** The same program's children: one more process, five more at once, and memory with the five idle. */
const runtimeChildren: RuntimeFloorChildren[] = [];
/** Each run's processes once the network is configured and every plugin runs, by name. */
const processes: Map<string, ProcessCost>[] = [];
/** Each run's /proc/meminfo parts at that moment (init/boot/ready-line.ts MEMINFO_MARK). */
const meminfo: Map<string, number>[] = [];
/** Each run's console up to that moment: the chart draws the median run's. */
const consoles: string[] = [];
/** Guest uptime at the config milestone: config from fw_cfg (onto a blank STATE disk), then from STATE. */
const configApplied: { fwcfg: number; state: number }[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'bench-boot-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
const CONFIG = join(scratch, 'machine.yaml');
writeFileSync(CONFIG, [
  'metadata: {type: hostnamespec, id: bench}\nspec: {hostname: bench1.example.test}\n',
  'metadata: {type: sysctl, id: net.ipv4.ip_forward}\nspec: {value: "1"}\n',
  'metadata: {type: addressspec, id: bench}\nspec: {address: 10.0.2.99/24, link: eth0}\n',
].join('---\n'));
/** A power down that did not end the VM in time: what the console said last is the why. */
const notClean = (what: string, exit: object, console: string) => new Error(
  `${what}: power down not clean (${JSON.stringify(exit)}); the console's end:\n${console.slice(-3000)}`,
);
/** The system image as SYSTEM-A holds it, on a disk of its own (read-only: every boot shares it). */
const systemDisk = { file: a.disk.image, format: 'raw' as const, readonly: true };
/** Boots the disk form until the config milestone; returns its guest uptime. */
async function bootToConfig(what: string, o: { disks: { file: string; format: 'raw' }[]; fwcfg?: FwCfg[] }) {
  const vm = launch({
    kernel: a.kernel, initrd: a.disk.initramfs, cmdline: a.cmdline, memoryMiB, ...clock, ...o,
    disks: [systemDisk, ...o.disks],
  });
  vms.push(vm);
  await vm.waitFor(milestoneLine('config'), 180_000);
  const m = parseMilestones(vm.console()).find((x) => x.name === 'config')!;
  const exit = await vm.powerdown(60_000);
  if (!exit.clean || exit.code !== 0) throw notClean(what, exit, vm.console());
  return m.uptime;
}
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  // The used memory sampled through the boot (init/boot/memory-trace.ts), for the chart's curve.
  const cmdline = `${a.cmdline} ${MEMTRACE_PARAM}`;
  const vm = launch({
    kernel: a.kernel, initrd: a.disk.initramfs, cmdline, memoryMiB, ...clock, disks: [systemDisk],
  });
  vms.push(vm);
  const line = await vm.waitFor(READY_RE, 180_000);
  const wall = (performance.now() - t0) / 1000;
  const f = parseReady(line[0]);
  if (!f) throw new Error(`unparsable ready line: ${line[0]}`);
  // The second wave of plugins starts once the first runs (init/engine/plugin-waves.ts): memory and each process's
  // cost are read once both milestones are reached, at the later of the two lines (PID 1 prints the costs there).
  await vm.waitFor(milestoneLine('network'), 180_000);
  await vm.waitFor(milestoneLine('plugins'), 180_000);
  const milestones = new Map(parseMilestones(vm.console()).map((m) => [m.name, m]));
  const plugins = milestones.get('plugins')!;
  const network = milestones.get('network')!;
  const up = plugins.uptime > network.uptime ? plugins : network;
  processes.push(new Map(parseProcesses(vm.console()).map((p) => [p.name, p])));
  meminfo.push(parseMeminfoLine(vm.console()));
  consoles.push(vm.console());
  const exit = await vm.powerdown(60_000);
  if (!exit.clean || exit.code !== 0) throw notClean(`run ${i + 1}`, exit, vm.console());
  ours.push({ ...f, wall, plugins: plugins.uptime, network: network.uptime, upMemKiB: up.memUsedKiB });
  process.stderr.write(`[bench] appliance run ${i + 1}/${runs}: ready at ${f.uptime.toFixed(3)}s guest, `
    + `${wall.toFixed(2)}s wall; plugins running at ${plugins.uptime.toFixed(3)}s, `
    + `network at ${network.uptime.toFixed(3)}s\n`);

  // The same system live: its image in the initramfs (the ISO's and PXE's form), with the same disk attached.
  const dvm = launch({
    kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline, memoryMiB, ...clock, disks: [systemDisk],
  });
  vms.push(dvm);
  const dline = await dvm.waitFor(READY_RE, 180_000);
  await dvm.waitFor(milestoneLine('network'), 180_000);
  await dvm.waitFor(milestoneLine('plugins'), 180_000);
  const dms = new Map(parseMilestones(dvm.console()).map((m) => [m.name, m]));
  const dexit = await dvm.powerdown(60_000);
  if (!dexit.clean || dexit.code !== 0) throw notClean(`run ${i + 1}, live`, dexit, dvm.console());
  live.push({
    ready: parseReady(dline[0])!.uptime, network: dms.get('network')!.uptime, plugins: dms.get('plugins')!.uptime,
    upMemKiB: Math.max(dms.get('network')!.memUsedKiB, dms.get('plugins')!.memUsedKiB),
  });
  process.stderr.write(`[bench] live (image in the initramfs), run ${i + 1}/${runs}: ready at `
    + `${live[i]!.ready.toFixed(3)}s guest, network at ${live[i]!.network.toFixed(3)}s, plugins running at `
    + `${live[i]!.plugins.toFixed(3)}s\n`);

  const f0 = performance.now();
  const fvm = launch({
    kernel: a.kernel, initrd: floorInitrd, cmdline: a.cmdline, memoryMiB, ...clock, disks: [systemDisk],
  });
  vms.push(fvm);
  const fl = await fvm.waitFor(/STATIC READY uptime=([\d.]+)s/, 120_000);
  const fwall = (performance.now() - f0) / 1000;
  await fvm.exited;
  floor.push({ uptime: Number(fl[1]), wall: fwall });
  process.stderr.write(`[bench] static floor run ${i + 1}/${runs}: ready at ${fl[1]}s guest\n`);

  const rvm = launch({
    kernel: a.kernel, initrd: runtimeInitrd, cmdline: a.cmdline, memoryMiB, ...clock, disks: [systemDisk],
  });
  vms.push(rvm);
  const rl = await rvm.waitFor(RUNTIME_READY_RE, 120_000);
  await rvm.waitFor(RUNTIME_IDLE_RE, 120_000);
  rvm.kill();
  runtimeFloor.push(Number(rl[1]));
  const children = parseRuntimeFloorChildren(rvm.console());
  runtimeChildren.push(children);
  process.stderr.write(`[bench] runtime floor run ${i + 1}/${runs}: first line at ${rl[1]}s guest, a child alone `
    + `at ${children.alone.toFixed(3)}s, the last of five at ${children.lastOfFive.toFixed(3)}s\n`);

  const disk = join(scratch, `state-${i}.img`);
  execFileSync('truncate', ['-s', '64M', disk]);
  execFileSync('mke2fs', ['-q', '-t', 'ext4', '-L', 'STATE', disk]);
  const disks = [{ file: disk, format: 'raw' as const }];
  const fwcfg = await bootToConfig(`run ${i + 1}, config from fw_cfg`,
    { disks, fwcfg: [{ name: 'opt/dev.appliance/config', file: CONFIG }] });
  const state = await bootToConfig(`run ${i + 1}, config from STATE`, { disks });
  configApplied.push({ fwcfg, state });
  process.stderr.write(`[bench] config run ${i + 1}/${runs}: applied at ${fwcfg.toFixed(3)}s guest from fw_cfg, `
    + `${state.toFixed(3)}s from STATE\n`);
}

const manifest = JSON.parse(
  readFileSync(join(OUT, 'manifest.json'), 'utf8'),
) as { artifacts: Record<string, { size: number }> };
const mb = (n: number) => `${(n / 1048576).toFixed(2)} MiB`;
const megabytes = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const readyS = stats(ours.map((o) => o.uptime));
const floorS = stats(floor.map((o) => o.uptime));
const result = {
  runs, memoryMiB,
  accel: `${process.env.APPLIANCE_ACCEL ?? 'tcg'}${icount ? ' -icount (guest time = instructions)' : ''}`,
  initStart: stats(ours.map((o) => o.initStart)),
  mainStart: stats(ours.map((o) => o.mainStart)),
  ready: readyS,
  wallToReady: stats(ours.map((o) => o.wall)),
  memUsedKiB: stats(ours.map((o) => o.memUsedKiB)),
  pluginsRunning: stats(ours.map((o) => o.plugins)),
  networkConfigured: stats(ours.map((o) => o.network)),
  memUsedWhenUpKiB: stats(ours.map((o) => o.upMemKiB)),
  configFromFwCfg: stats(configApplied.map((c) => c.fwcfg)),
  configFromState: stats(configApplied.map((c) => c.state)),
  floorReady: floorS,
  floorWall: stats(floor.map((o) => o.wall)),
  runtimeFloor: stats(runtimeFloor),
  runtimeOneMoreProcess: stats(runtimeChildren.map((c) => c.alone)),
  runtimeFiveMoreProcesses: stats(runtimeChildren.map((c) => c.lastOfFive)),
  runtimeFiveMoreFromSpawn: stats(runtimeChildren.map((c) => c.lastOfFive - c.fiveSpawned)),
  runtimeIdleUsedKiB: stats(runtimeChildren.map((c) => c.idleUsedKiB)),
  ratioToFloor: readyS.median / floorS.median,
  live: {
    ready: stats(live.map((o) => o.ready)), networkConfigured: stats(live.map((o) => o.network)),
    pluginsRunning: stats(live.map((o) => o.plugins)), memUsedWhenUpKiB: stats(live.map((o) => o.upMemKiB)),
  },
  memoryPartsKiB: Object.fromEntries([...new Set(meminfo.flatMap((m) => [...m.keys()]))].map((k) => [
    k, stats(meminfo.flatMap((m) => m.get(k) ?? [])),
  ])),
  kernelBytes: manifest.artifacts.vmlinuz!.size,
  initramfsBytes: manifest.artifacts.initramfs!.size,
  diskInitramfsBytes: statSync(a.disk.initramfs).size,
  systemImageBytes: statSync(a.disk.image).size,
  processesWhenUp: Object.fromEntries([...new Set(processes.flatMap((m) => [...m.keys()]))].map((name) => {
    const of = (k: 'rssKiB' | 'pssKiB' | 'privateKiB' | 'cpuSeconds') => stats(
      processes.flatMap((m) => m.get(name)?.[k] ?? []),
    );
    return [name, {
      rssKiB: of('rssKiB'), pssKiB: of('pssKiB'), privateKiB: of('privateKiB'), cpuSeconds: of('cpuSeconds'),
    }];
  })),
};
/** Figures in KiB as MiB. */
const mibStats = (s: Stats): Stats => ({ median: s.median / 1024, min: s.min / 1024, max: s.max / 1024 });
const mib = (kib: number) => `${(kib / 1024).toFixed(1).padStart(6)} MiB`;
const processRows = Object.entries(result.processesWhenUp).map(([name, f]) => `    ${name.padEnd(26)}`
  + `RSS ${mib(f.rssKiB.median)}  PSS ${mib(f.pssKiB.median)}  private ${mib(f.privateKiB.median)}  `
  + `CPU ${f.cpuSeconds.median.toFixed(2).padStart(5)} s`).join('\n');
const cpuSum = Object.values(result.processesWhenUp).reduce((n, f) => n + f.cpuSeconds.median, 0);
const pssSum = Object.values(result.processesWhenUp).reduce((n, f) => n + f.pssKiB.median, 0);
const upS = Math.max(result.pluginsRunning.median, result.networkConfigured.median);
const memoryParts = Object.entries(result.memoryPartsKiB).filter(([k]) => k !== 'MemTotal' && k !== 'MemAvailable')
  .map(([k, v]) => `${k} ${mib(v.median).trim()}`).join(', ');
const ratio = (x: { median: number }) => `${(x.median / floorS.median).toFixed(2)}x floor`;
writeFileSync(join(OUT, 'bench-boot.json'), JSON.stringify(result, null, 2) + '\n');
// The run whose every-plugin milestone is the median one, drawn (scripts/lib/boot-chart.ts).
const medianRun = ours.map((o, i) => [o.plugins, i] as const).sort((p, q) => p[0] - q[0])[Math.floor(runs / 2)]![1];
const chart = join(OUT, 'bench-boot.svg');
// Its console too: what the chart was drawn from.
writeFileSync(join(OUT, 'bench-boot-console.txt'), consoles[medianRun]!);
writeFileSync(chart, bootChartSvg(bootTimeline(consoles[medianRun]!), {
  title: `boot of the disk form (${memoryMiB} MiB, ${result.accel}): run ${medianRun + 1} of ${runs}`,
  floor: floorS.median, runtimeFloor: result.runtimeFloor.median, memoryBudgetMiB: MEMORY_BUDGET_MIB,
  runtimeFloorPlugins: result.runtimeFiveMoreProcesses.median, memoryFloorMiB: result.runtimeIdleUsedKiB.median / 1024,
}));
process.stdout.write(`
boot benchmark: ${runs} runs, ${memoryMiB} MiB, ${result.accel}; the disk form (the system image read from a disk)
  guest uptime at init exec     ${fmt(result.initStart)}
  guest uptime at JS main       ${fmt(result.mainStart)}
  guest uptime at ready         ${fmt(readyS)}
  wall time QEMU start->ready   ${fmt(result.wallToReady)}
  guest used memory at ready    ${fmt(stats(ours.map((o) => o.memUsedKiB / 1024)), ' MiB', 1)}
  guest uptime, plugins running ${fmt(result.pluginsRunning)}  ${ratio(result.pluginsRunning)} (target <= 4x)
  guest uptime, network up      ${fmt(result.networkConfigured)}  ${ratio(result.networkConfigured)} (target <= 3x)
  used memory, network up and every plugin running  ${fmt(stats(ours.map((o) => o.upMemKiB / 1024)), ' MiB', 1)}  `
  + `(target <= ${MEMORY_BUDGET_MIB} MiB)
  config applied, from fw_cfg   ${fmt(result.configFromFwCfg)}  ${ratio(result.configFromFwCfg)} (target <= 3x)
  config applied, from STATE    ${fmt(result.configFromState)}  ${ratio(result.configFromState)} (target <= 3x)
  each process once both are reached (medians; PSS shares what several map; sums: PSS ${mib(pssSum).trim()}, CPU `
  + `${cpuSum.toFixed(2)} s of the ${upS.toFixed(2)} s until both)
${processRows}
  where used memory goes then (/proc/meminfo, medians): ${memoryParts}
  static-init floor (ready)     ${fmt(floorS)}
  static-init floor (wall)      ${fmt(result.floorWall)}
  runtime floor (first line)    ${fmt(result.runtimeFloor)}  ${ratio(result.runtimeFloor)}: Node's own start as PID 1,
                                a two-line program made like ours (the earliest any of our milestones can be)
  runtime floor, + one process  ${fmt(result.runtimeOneMoreProcess)}  ${ratio(result.runtimeOneMoreProcess)}: the same
                                executable spawned alone at that line, to its first line (network and config each
                                need a plugin process to run: the process rule)
  runtime floor, + five at once ${fmt(result.runtimeFiveMoreProcesses)}  ${ratio(result.runtimeFiveMoreProcesses)}: `
  + `the last of five first running
                                (${fmt(result.runtimeFiveMoreFromSpawn)} from their spawn; every plugin of the image)
  runtime floor, memory         ${fmt(mibStats(result.runtimeIdleUsedKiB), ' MiB', 1)}: used with `
  + `PID 1 and the five idle (six bare Node processes)
  ready / floor (guest, median) ${result.ratioToFloor.toFixed(2)}x   (target <= 2x)
  the same build live (ISO, PXE: its image in the initramfs, decompressed on each page's first touch):
    ready ${fmt(result.live.ready)}  ${ratio(result.live.ready)}; network up `
  + `${fmt(result.live.networkConfigured)}  ${ratio(result.live.networkConfigured)}
    plugins running ${fmt(result.live.pluginsRunning)}  ${ratio(result.live.pluginsRunning)}; used `
  + `memory then ${fmt(mibStats(result.live.memUsedWhenUpKiB), ' MiB', 1)}
  kernel (bzImage)              ${mb(result.kernelBytes)}   (target <= 4 MiB)
  initramfs, disk form          ${(result.diskInitramfsBytes / 1e3).toFixed(1)} kB; its image (SYSTEM-A, uncompressed) `
  + `${megabytes(result.systemImageBytes)}
  initramfs, live (zstd)        ${mb(result.initramfsBytes)}, ${megabytes(result.initramfsBytes)} `
  + `(limit ${megabytes(INITRAMFS_LIMIT_BYTES)}: image/initramfs.ts)
figures saved to out/bench-boot.json, the median run drawn in ${chart}
`);
