// device-drivers: the machine's devices as sysfs lists them (/sys/bus/<bus>/devices/<name>:
// modalias, bound driver, ids), and the loading of the modules that drive those no driver has
// claimed yet, by modalias (modalias.ts). PID 1 runs it once before it mounts disks (coldplug);
// the system plugin's device-status controller runs it again for each device plugged in later.
import { readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isErrno } from '../../native/errno.ts';
import { listDir, readOptional } from '../sys/optional-fs.ts';
import { AliasIndex, parseModulesAlias } from './modalias.ts';
import { loadWithDependencies, ModuleLoadError, readModuleIndex, type ModuleLoader } from './module-index.ts';

export interface HardwareDevice {
  bus: string;
  /** The device's name on its bus: 0000:00:02.0, 1-1:1.0, virtio3, 2:0:0:0. */
  name: string;
  modalias: string;
  /** The driver bound to it, if any. */
  driver?: string;
  /** vendor, device, class, as the bus's sysfs attributes give them (pci, virtio), without 0x. */
  ids: Partial<Record<'vendor' | 'device' | 'class', string>>;
}

/** A sysfs attribute, or undefined when the device has none (ENOENT), or cannot tell (ENODEV, EINVAL). */
const attribute = (path: string) => readOptional(path, 'ENODEV', 'EINVAL')?.trim();

/**
 * Every device with a modalias, on every bus (or on `buses` only), in bus and name order; with their ids
 * only when asked. PID 1's coldplug needs modalias and driver alone, on the buses its modules drive, and
 * reads sysfs often while devices settle: under TCG each device costs milliseconds.
 */
export function readDevices(
  sysBus = '/sys/bus', o: { ids?: boolean; buses?: ReadonlySet<string> } = {},
): HardwareDevice[] {
  const out: HardwareDevice[] = [];
  // No sysfs (a container): no buses; a bus without devices/: none on it.
  for (const bus of listDir(sysBus).sort().filter((b) => !o.buses || o.buses.has(b))) {
    for (const name of listDir(join(sysBus, bus, 'devices')).sort()) {
      const dir = join(sysBus, bus, 'devices', name);
      const modalias = attribute(join(dir, 'modalias'));
      if (!modalias) continue;
      let driver: string | undefined;
      try {
        driver = basename(readlinkSync(join(dir, 'driver')));
      } catch (e) {
        if (!isErrno(e, 'ENOENT')) throw e;
      }
      const ids: HardwareDevice['ids'] = {};
      for (const k of o.ids ? ['vendor', 'device', 'class'] as const : []) {
        const v = attribute(join(dir, k));
        if (v) ids[k] = v.replace(/^0x/, '');
      }
      out.push({ bus, name, modalias, ...(driver ? { driver } : {}), ids });
    }
  }
  return out;
}

/** The shipped modules and the devices they drive, from /lib/modules/<release>. */
export interface DriverIndex {
  dir: string;
  aliases: AliasIndex;
  modules: ReturnType<typeof readModuleIndex>['modules'];
}

/** Reads modules.alias and modules.dep; an image without modules has an empty index. */
export function readDriverIndex(dir: string): DriverIndex {
  const text = readOptional(join(dir, 'modules.alias')) ?? '';
  return { dir, aliases: new AliasIndex(parseModulesAlias(text)), modules: readModuleIndex(dir).modules };
}

export interface DriverLoadResult {
  /** Each module loaded, with the device that asked for it (a dependency names its module's device). */
  loaded: { module: string; device: string }[];
  failed: { module: string; device: string; error: string }[];
}

/**
 * For each device no driver has claimed, loads the shipped modules its modalias matches, with their
 * dependencies, skipping what `loaded` (the names in /proc/modules) holds; `loaded` is updated.
 */
export function loadDrivers(
  devices: readonly HardwareDevice[], index: DriverIndex, loader: ModuleLoader, loaded: Set<string>,
): DriverLoadResult {
  const result: DriverLoadResult = { loaded: [], failed: [] };
  const tried = new Set<string>();
  for (const d of devices) {
    if (d.driver) continue;
    const device = `${d.bus} ${d.name}`;
    for (const module of index.aliases.modulesFor(d.modalias)) {
      if (loaded.has(module) || tried.has(module)) continue;
      tried.add(module);
      const entry = index.modules.get(module);
      if (!entry) {
        result.failed.push({ module, device, error: `modules.alias names ${module}, which modules.dep does not list` });
        continue;
      }
      try {
        const now = loadWithDependencies(entry, index.dir, loader, loaded, '', index.modules);
        for (const m of now) result.loaded.push({ module: m, device });
      } catch (e) {
        if (!(e instanceof ModuleLoadError)) throw e;
        for (const m of e.loaded) result.loaded.push({ module: m, device });
        result.failed.push({ module, device, error: e.message });
      }
    }
  }
  return result;
}
