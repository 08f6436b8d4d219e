// pid1: the boot sequence when this program is the kernel's init. Phases run in
// order, each logged with its duration; the ready line ends boot.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { native, type Native } from '../../native/index.ts';
import { createLogger, type Logger } from '../../machinery/log.ts';
import { VERSION } from '../../machinery/version.ts';
import { monotonicSeconds, processStartSeconds } from '../../machinery/sys/clock.ts';
import { clockProblem, floorFor } from '../../machinery/sys/clock-floor.ts';
import { cmdlineFlag, parseCmdline, type Cmdline } from '../../machinery/sys/cmdline.ts';
import { installGuard } from './guard.ts';
import { memoryParts, usedMemoryKiB } from '../../machinery/sys/meminfo.ts';
import { mountEarly } from './mounts.ts';
import { OWN_MOUNTS_ENV, spawnInOwnMountNamespace } from '../../machinery/sys/mount-namespace.ts';
import { spawnAtNice } from '../../machinery/sys/nice.ts';
import { watchPower } from './power-button.ts';
import { formatMeminfo, formatMilestone, formatProcess, formatReady } from './ready-line.ts';
import { machineProcesses } from './process-cost.ts';
import { MEMTRACE_PARAM, startMemoryTrace } from './memory-trace.ts';
import { watchLoopStalls } from './loop-stall.ts';
import { createReaper, type Reaper } from './reaper.ts';
import { createShutdown, type PowerAction, type Shutdown } from './shutdown.ts';
import { runTestSwitches } from './test-switches.ts';
import { coldplugDrivers, describeColdplug } from './coldplug.ts';
import {
  mountBootPartition, mountEphemeralPartition, mountStatePartition, type LabelledMount,
} from './state-partition.ts';
import { isSlot, SLOT_PARAM } from '../../machinery/disk/boot-slots.ts';
import { INITRAMFS_PAYLOAD_DIR, PAYLOAD_INDEX } from '../../machinery/disk/slot-payload.ts';
import { findSystemPartition } from '../upgrade/system-partition.ts';
import { BootPartition } from '../upgrade/boot-partition.ts';
import { fileConfigStore, memoryConfigStore } from '../../machinery/config/saved-config.ts';
import { EXTENSION_UIDS_FILE } from '../engine/extension/extension-uids.ts';
import { VOLUMES_DIR, volumeBacking } from '../engine/extension/extension-volumes.ts';
import { LIVE_PARAM } from '../../machinery/disk/labels.ts';
import { machineId } from '../../machinery/sys/machine-id.ts';
import { testBreak } from '../../machinery/sys/test-break.ts';
import { mountImage } from '../../machinery/sys/image-mount.ts';
import { MNT_DETACH } from '../../machinery/sys/mount-table.ts';
import { prepareGroup, removeGroup } from '../../machinery/sys/cgroup.ts';
import { withExistingInterfaces, writeSysctls } from '../../machinery/sys/sysctl.ts';
import { HARDENING_PARAMS } from '../../machinery/kernel/hardening.ts';
import type { Engine } from '../engine/engine.ts';
import { msSinceStart } from '../../cosi/monotonic.ts';

/** Where PID 1 serves the COSI API (override: appliance.api=HOST:PORT) and plugins connect. */
export const DEFAULT_API_LISTEN = '0.0.0.0:50000';
export const PLUGIN_SOCKET = '/run/cosi/plugins.sock';
/** Where an upgrade's bundle is staged while it is checked (EPHEMERAL on an installed disk). */
export const UPGRADE_STAGING = '/var/lib/appliance/upgrade';
/** Extensions' images, kept across restarts of the engine while /var lasts; and where they are mounted. */
export const EXTENSION_IMAGES = '/var/lib/appliance/extensions';
/** The update poller's metadata TUF trusts, this machine's seed, the versions that failed here. */
export const UPDATES_DIR = '/var/lib/appliance/updates';
export const EXTENSION_MOUNTS = '/run/extensions';
/** Extensions' secret files: /run is memory, never a disk. */
export const EXTENSION_SECRETS = '/run/extension-secrets';

/** What each signal to PID 1 means. SIGINT is what the kernel sends for
 * ctrl-alt-del once reboot(CAD_OFF) handed that decision to us. */
export const SIGNAL_ACTIONS: Readonly<Record<string, PowerAction>> = {
  SIGINT: 'reboot',
  SIGTERM: 'poweroff',
  SIGPWR: 'poweroff',
  SIGUSR1: 'halt',
  SIGUSR2: 'poweroff',
};

async function phase<T>(log: Logger, name: string, fn: () => T | Promise<T>): Promise<T> {
  const t0 = msSinceStart();
  const r = await fn();
  log.info(`phase ${name} done in ${(msSinceStart() - t0).toFixed(1)}ms`);
  return r;
}

export async function runPid1(): Promise<void> {
  const initStart = processStartSeconds();
  const mainStart = monotonicSeconds();
  const log = createLogger('init');
  log.info(`appliance ${VERSION} starting as pid ${process.pid} (node ${process.version})`);

  let n: Native;
  try {
    n = native();
  } catch (e) {
    // Without the addon there is no mount and no reboot: say so and stay up rather than panic.
    log.error(`cannot load the native addon, the system cannot boot: ${(e as Error).message}`);
    setInterval(() => {}, 1 << 30);
    return;
  }

  let cmdline: Cmdline = new Map();
  let reaper: Reaper | undefined;
  let engine: Engine | undefined;
  let shutdown: Shutdown | undefined;
  const guard = installGuard({
    log,
    countdownSeconds: () => {
      const v = Number(cmdline.get('appliance.fatal_countdown'));
      return Number.isInteger(v) && v >= 0 ? v : 10;
    },
    restart: async (why) => {
      if (shutdown) await shutdown('reboot', why);
      else n.reboot('restart');
    },
  });

  try {
    await phase(log, 'mount', () => mountEarly(n, log.child('mount')));
    log.attachKmsg();
    const rawCmdline = await phase(log, 'cmdline', () => readFileSync('/proc/cmdline', 'utf8').trim());
    cmdline = parseCmdline(rawCmdline);
    if (cmdlineFlag(cmdline, MEMTRACE_PARAM)) startMemoryTrace(log);
    watchLoopStalls(log.child('loop'));
    // Before anything checks a certificate or stamps a record: a clock at 1970 (a dead RTC, or none) refuses every
    // client certificate as not yet valid.
    await phase(log, 'clock', () => {
      const now = n.clockNow();
      const floor = floorFor(now);
      if (floor === undefined) {
        // Far ahead is not moved back (only a time server may do that), but said: certificates will look expired.
        const ahead = clockProblem(now);
        if (ahead) log.warn(`clock: ${ahead}: certificates checked against it look expired`);
        return;
      }
      n.clockStep(floor);
      log.warn(`clock: it read ${new Date(now).toISOString()}, before this build was made: moved forward to `
        + `${new Date(floor).toISOString()} (a dead RTC, or none?) until a time server sets it`);
    });
    reaper = await phase(log, 'reaper', () => createReaper(n, log.child('reaper')));
    const r = reaper;
    shutdown = createShutdown({
      native: n, log: log.child('shutdown'), reaper: r, system: true,
      // Holders of the shutdown first, then plugins, gently, while the API still reports what is happening.
      beforeStop: async (action, reason, hold) => {
        await engine?.prepareShutdown(action, reason, hold);
        await engine?.setBootStatus({ phase: 'stopping', ready: false })
          .catch((e: Error) => log.warn(`boot status: ${e.message}`));
        await engine?.stop();
      },
    });
    await phase(log, 'signals', () => {
      n.reboot('cad_off');
      for (const [sig, action] of Object.entries(SIGNAL_ACTIONS)) {
        process.on(sig as NodeJS.Signals, () => void shutdown?.(action, `signal ${sig}`));
      }
      const watched = watchPower(n, log.child('power'), () => void shutdown?.('poweroff', 'ACPI power button'));
      log.info(`power button: ${watched}`);
    });
    // The kernel's hardening before any link comes up: the network plugin starts first (engine/plugin-waves.ts)
    // and the system plugin, whose default layer these are, after it runs.
    await phase(log, 'hardening', () => {
      const w = writeSysctls(withExistingInterfaces(HARDENING_PARAMS));
      for (const f of w.failed) log.warn(`hardening: ${f.key}: ${f.why}`);
      log.info(`hardening: ${w.written.length} kernel parameters set`
        + `${w.absent.length ? `; not in this kernel: ${w.absent.join(', ')}` : ''}`);
    });
    // A machine missing a driver still boots and serves the API, which then says what is missing.
    await phase(log, 'drivers', () => coldplugDrivers(n).then(
      (r) => (r.failed.length ? log.warn : log.info)(`drivers: ${describeColdplug(r)}`),
      (e: Error) => log.warn(`drivers: cannot load the devices' modules: ${e.message}`),
    ));
    if (testBreak() === 'init-exit') {
      log.error('this build is broken on purpose (test-break init-exit): PID 1 exits before the API serves');
      // Past the guard, which turns process.exit into a graceful reboot: the kernel sees init die, as it would.
      (process as unknown as { reallyExit(code: number): never }).reallyExit(1);
    }
    const live = cmdlineFlag(cmdline, LIVE_PARAM)
      ? { why: `a live system (${LIVE_PARAM}) leaves disks alone` } : undefined;
    const stateMount = live ?? await phase(log, 'state', () => mountStatePartition(n));
    if (stateMount.why === undefined) log.info(`state: ${stateMount.device} mounted on ${stateMount.dir}`);
    else log.info(`state: ${stateMount.why}: the machine config is held in memory only`); // a live boot's fact
    const bootSlot = cmdline.get(SLOT_PARAM);
    const bootMount: LabelledMount = live ?? (!isSlot(bootSlot) ? { why: `not booted from a boot slot (${SLOT_PARAM})` }
      : stateMount.why !== undefined ? { why: `no STATE, so no disk to find the boot slots on` }
        : await phase(log, 'boot', () => mountBootPartition(n, stateMount.device)));
    if (bootMount.why === undefined) log.info(`boot: slot ${bootSlot}; ${bootMount.device} on ${bootMount.dir}`);
    else log.info(`boot: ${bootMount.why}: no upgrades`);
    // What the system carries besides itself (an appliance's extensions, its first config): beside the kernel in
    // the slot it booted, or in the initramfs of a live system.
    const payload = bootMount.why === undefined && isSlot(bootSlot)
      ? { dir: join(bootMount.dir, bootSlot), from: `slot ${bootSlot}` }
      : existsSync(join(INITRAMFS_PAYLOAD_DIR, PAYLOAD_INDEX)) ? { dir: INITRAMFS_PAYLOAD_DIR, from: 'the initramfs' }
        : undefined;
    const varMount = live ?? await phase(log, 'ephemeral', () => mountEphemeralPartition(n));
    if (varMount.why === undefined) log.info(`ephemeral: ${varMount.device} mounted on ${varMount.dir}`);
    else log.info(`ephemeral: ${varMount.why}: /var is in memory`);
    // Loaded here, not at start: the API stack (HTTP/2 server, codecs, yaml) is most of
    // the bundle, and evaluating it is what the api phase then shows.
    const reached = new Set<string>();
    engine = await phase(log, 'api', async () => (await import('../engine/engine.ts')).startEngine({
      log: log.child('engine'), native: n,
      plugins: (await import('../../plugins/index.ts')).PLUGINS
        .filter((p) => !p.testOnly || cmdlineFlag(cmdline, 'appliance.test.plugins')),
      listen: cmdline.get('appliance.api') || DEFAULT_API_LISTEN,
      pluginSocket: PLUGIN_SOCKET,
      cmdline: { raw: rawCmdline, params: cmdline },
      spawn: (args, env, { ownMounts, nice }) => {
        const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
        const start = (e: NodeJS.ProcessEnv) => r.spawn(process.execPath, args, { env: e, stdio });
        const spawn = () => (ownMounts
          ? spawnInOwnMountNamespace(n, () => start({ ...env, [OWN_MOUNTS_ENV]: '1' })) : start(env));
        return nice === undefined ? spawn() : spawnAtNice(nice, spawn);
      },
      onPowerRequest: (action, id, hold) => void shutdown?.(action, `API power request "${id}"`, hold),
      onMilestone: (name) => {
        reached.add(name);
        const figures = { name, uptime: monotonicSeconds(), memUsedKiB: usedMemoryKiB() };
        // What each process costs once the machine is up (its network configured and every plugin running: the
        // later of the two), printed before that milestone's own line so that whoever waits for it has them.
        if ((name === 'network' || name === 'plugins') && reached.has('network') && reached.has('plugins')) {
          try {
            for (const p of machineProcesses()) log.info(formatProcess(p));
            log.info(formatMeminfo(memoryParts()));
          } catch (e) { log.warn(`cannot list what each process costs: ${(e as Error).message}`); }
        }
        log.info(formatMilestone(figures));
      },
      installer: {
        kernel: {
          mount: (...a) => n.mountAsync(...a), umount2: (...a) => n.umount2Async(...a), sync: () => n.syncAsync(),
          rereadPartitions: (disk) => n.rereadPartitions(disk), flushBuffers: (disk) => n.flushBuffers(disk),
        },
        machineId: () => machineId(),
        reboot: (why) => void shutdown?.('reboot', why),
      },
      ...(bootMount.why === undefined && isSlot(bootSlot) ? {
        upgrade: {
          boot: new BootPartition(bootMount.dir, bootSlot), stagingDir: UPGRADE_STAGING,
          reboot: (why) => void shutdown?.('reboot', why),
          systemDisk: {
            partition: (slot) => findSystemPartition(bootMount.device, slot), flushBuffers: (d) => n.flushBuffers(d),
          },
        },
      } : { noUpgradeWhy: bootMount.why }),
      extensions: {
        imagesDir: EXTENSION_IMAGES, mountsDir: EXTENSION_MOUNTS, secretsDir: EXTENSION_SECRETS,
        mount: (image, dir) => mountImage(n, image, dir), sync: () => n.syncAsync(),
        unmount: (dir) => n.umount2(dir, MNT_DETACH),
        prepareGroup, removeGroup,
        ...(stateMount.why === undefined ? { uidsFile: join(stateMount.dir, EXTENSION_UIDS_FILE) } : {}),
        volumes: {
          dir: VOLUMES_DIR, backing: () => volumeBacking(readFileSync('/proc/self/mounts', 'utf8'), VOLUMES_DIR, n),
        },
      },
      ...(payload ? { payload } : {}),
      updatesDir: UPDATES_DIR,
      configStore: stateMount.why === undefined
        ? fileConfigStore(stateMount.dir) : memoryConfigStore(stateMount.why),
    }));
  } catch (e) {
    guard.fatal('boot failed', e);
    return;
  }

  const readyAt = monotonicSeconds();
  log.info(formatReady({ uptime: readyAt, initStart, mainStart, memUsedKiB: usedMemoryKiB() }));
  void engine.setBootStatus({ phase: 'running', ready: true, readyUptimeSeconds: Number(readyAt.toFixed(3)) });
  runTestSwitches({ cmdline, log: log.child('test'), reaper, guard, flag: (k) => cmdlineFlag(cmdline, k) });
}
