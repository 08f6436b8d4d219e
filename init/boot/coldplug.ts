// coldplug: PID 1 loads the drivers the machine's devices ask for (by modalias, see
// machinery/kernel/device-drivers.ts) before the plugins start, so that the network plugin finds
// every NIC (ENA, gVNIC, Intel and Realtek NICs are modules) and a disk behind a module's controller
// is there when STATE and EPHEMERAL are looked for (the disks a system image is read from are built
// in). Loading a driver makes new devices some time later, and they may need drivers of their own:
// so after each round that loaded something, it waits for the devices to settle and looks again.
import { release } from 'node:os';
import { join } from 'node:path';
import type { Native } from '../../native/index.ts';
import {
  loadDrivers, readDevices, readDriverIndex, type DriverLoadResult, type HardwareDevice,
} from '../../machinery/kernel/device-drivers.ts';
import { listDir } from '../../machinery/sys/optional-fs.ts';
import { readLoaded, type ModuleLoader } from '../../machinery/kernel/module-index.ts';
import { msSinceStart } from '../../cosi/monotonic.ts';

export interface ColdplugOptions {
  modulesDir?: string;
  sysBus?: string;
  sysBlock?: string;
  /** How long the devices must stay the same to count as settled, and the most to wait for that. */
  quietMs?: number;
  maxWaitMs?: number;
  maxRounds?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What sysfs shows of devices and disks (none without a block layer), to tell when it stops changing. */
function snapshot(sysBus: string, sysBlock: string, buses: ReadonlySet<string>) {
  const devices = readDevices(sysBus, { buses });
  const key = [...devices.map((d) => `${d.bus}/${d.name}=${d.driver ?? ''}`), ...listDir(sysBlock)].join('\n');
  return { devices, key };
}

/**
 * Waits until the snapshot is unchanged for quietMs (at most maxWaitMs); returns the time waited and the
 * devices last read, which the next round looks at.
 */
async function settle(
  sysBus: string, sysBlock: string, buses: ReadonlySet<string>, quietMs: number, maxWaitMs: number,
): Promise<{ ms: number; devices: HardwareDevice[] }> {
  const t0 = msSinceStart();
  let last = snapshot(sysBus, sysBlock, buses);
  let since = t0;
  while (msSinceStart() - t0 < maxWaitMs) {
    await sleep(50);
    const now = snapshot(sysBus, sysBlock, buses);
    if (now.key !== last.key) since = msSinceStart();
    else if (msSinceStart() - since >= quietMs) break;
    last = now;
  }
  return { ms: msSinceStart() - t0, devices: last.devices };
}

export interface ColdplugResult extends DriverLoadResult { rounds: number; settledMs: number; aliases: number }

export async function coldplugDrivers(n: Native, o: ColdplugOptions = {}): Promise<ColdplugResult> {
  const dir = o.modulesDir ?? join('/lib/modules', release());
  const sysBus = o.sysBus ?? '/sys/bus';
  const sysBlock = o.sysBlock ?? '/sys/class/block';
  const index = readDriverIndex(dir);
  const loader: ModuleLoader = { load: (path, params) => n.finitModule(path, params), unload: () => {} };
  const loaded = new Set(readLoaded({ dir, procModules: '/proc/modules' }).keys());
  const buses = index.aliases.kinds();
  const result: ColdplugResult = { loaded: [], failed: [], rounds: 0, settledMs: 0, aliases: index.aliases.size };
  if (!index.aliases.size) return result;
  let devices = readDevices(sysBus, { buses });
  for (let round = 0; round < (o.maxRounds ?? 4); round++) {
    result.rounds++;
    const r = loadDrivers(devices, index, loader, loaded);
    result.loaded.push(...r.loaded);
    result.failed.push(...r.failed);
    if (!r.loaded.length) break;
    const settled = await settle(sysBus, sysBlock, buses, o.quietMs ?? 300, o.maxWaitMs ?? 5000);
    result.settledMs += settled.ms;
    devices = settled.devices;
  }
  return result;
}

/** One console line: what was loaded for which device, what failed, and how long the devices took. */
export function describeColdplug(r: ColdplugResult): string {
  if (!r.aliases) return 'no modules.alias: this image ships no drivers as modules';
  const loaded = r.loaded.map((l) => `${l.module} (${l.device})`).join(', ');
  const failed = r.failed.map((f) => `${f.module} for ${f.device}: ${f.error}`).join('; ');
  return [
    loaded ? `loaded ${loaded}` : 'no device needed a module',
    ...(failed ? [`FAILED ${failed}`] : []),
    ...(r.loaded.length ? [`${r.rounds} rounds, devices settled in ${(r.settledMs / 1000).toFixed(2)} s`] : []),
  ].join('; ');
}
