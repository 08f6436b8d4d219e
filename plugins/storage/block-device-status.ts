// block-device-status: /sys/class/block + superblocks -> BlockDevice resources. Woken by
// kernel uevents (NETLINK_KOBJECT_UEVENT) for the block subsystem: hotplug and
// unplug show within a second, without polling.
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Native } from '../../native/index.ts';
import { subscribeUevents } from '../sdk/uevent.ts';
import { listBlockDevices } from '../../machinery/sys/sysfs-block.ts';
import { BLOCK_DEVICE_TYPE, STORAGE_NS } from '../../proto/gen/resource-types.ts';

export function blockDeviceStatusController(n: () => Native, sys = '/sys/class/block', dev = '/dev'): Controller {
  return {
    name: 'block-device-status',
    inputs: () => [],
    outputs: () => [{ type: BLOCK_DEVICE_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = subscribeUevents(n(), 'block', () => ctx.requestReconcile());
      try {
        while (await ctx.next()) {
          const devices = listBlockDevices(sys, dev);
          for (const [name, spec] of devices) {
            await ctx.state.put({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, id: name }, spec);
          }
          await ctx.state.cleanup({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE }, new Set(devices.keys()));
        }
      } finally { stop(); }
    },
  };
}
