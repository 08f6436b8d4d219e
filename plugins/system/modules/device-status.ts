// device-status: the machine's devices (sysfs, device-drivers.ts) -> a Device per device on the
// buses people plug hardware into, with its driver and the modules that match it. Devices that
// appear later (PCIe hotplug, a USB stick, the disks behind a controller whose driver just loaded)
// wake it through uevents, and it loads their modules by modalias, as PID 1 did at boot for the
// devices present then. On a host (`serve`) it only reports: the host's kernel is not ours to change.
import type { Controller } from '../../../cosi/controller/contract.ts';
import type { Native } from '../../../native/index.ts';
import { subscribeUevents } from '../../sdk/uevent.ts';
import { type DeviceSpec } from '../types.ts';
import {
  loadDrivers, readDevices, readDriverIndex, type HardwareDevice,
} from '../../../machinery/kernel/device-drivers.ts';
import { readLoaded, type ModuleLoader, type ModuleSources } from '../../../machinery/kernel/module-index.ts';
import { DEVICE_TYPE, SYSTEM_NS } from '../../../proto/gen/resource-types.ts';

/** The buses whose devices are listed: where a NIC, a disk controller or a stick shows up. */
export const LISTED_BUSES = ['pci', 'usb', 'virtio', 'scsi'] as const;

export interface DeviceStatusOptions {
  sources: ModuleSources;
  sysBus?: string;
  /** Loads modules for devices without a driver; absent: report only. */
  loader?: ModuleLoader;
  native?: () => Native;
}

const deviceId = (d: HardwareDevice) => `${d.bus}/${d.name}`;

export function deviceStatusController(o: DeviceStatusOptions): Controller {
  return {
    name: 'device-status',
    inputs: () => [],
    outputs: () => [{ type: DEVICE_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = o.native ? subscribeUevents(o.native(), LISTED_BUSES, () => ctx.requestReconcile()) : () => {};
      const index = readDriverIndex(o.sources.dir);
      // The listed buses and those the shipped modules drive, as PID 1's coldplug reads them: not the dozens
      // of ACPI devices, each a few sysfs reads, at every event.
      const buses = new Set<string>([...LISTED_BUSES, ...index.aliases.kinds()]);
      const read = () => readDevices(o.sysBus, { ids: true, buses });
      // A module that failed to load is not tried again for each event; its devices keep saying why.
      const failed = new Map<string, string>();
      try {
        while (await ctx.next()) {
          let devices = read();
          if (o.loader) {
            const skip = new Set([...readLoaded(o.sources).keys(), ...failed.keys()]);
            const r = loadDrivers(devices, index, o.loader, skip);
            for (const f of r.failed) failed.set(f.module, f.error);
            for (const l of r.loaded) ctx.log.info(`loaded ${l.module} for ${l.device}`);
            for (const f of r.failed) ctx.log.warn(`cannot load ${f.module} for ${f.device}: ${f.error}`);
            if (r.loaded.length) devices = read(); // bound now, some of them
          }
          const listed = devices.filter((d) => (LISTED_BUSES as readonly string[]).includes(d.bus));
          for (const d of listed) {
            const modules = index.aliases.modulesFor(d.modalias);
            const errors = modules.flatMap((m) => (failed.has(m) ? [`${m}: ${failed.get(m)}`] : []));
            const spec: DeviceSpec = {
              bus: d.bus, name: d.name, modalias: d.modalias, driver: d.driver ?? '', modules,
              vendor: d.ids.vendor ?? '', device: d.ids.device ?? '', class: d.ids.class ?? '',
              error: errors.join('; '),
            };
            await ctx.state.put({ namespace: SYSTEM_NS, type: DEVICE_TYPE, id: deviceId(d) }, spec);
          }
          await ctx.state.cleanup({ namespace: SYSTEM_NS, type: DEVICE_TYPE }, new Set(listed.map(deviceId)));
        }
      } finally { stop(); }
    },
  };
}
