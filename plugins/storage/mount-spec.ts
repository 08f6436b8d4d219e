// mount-spec: MergedMountSpec (id = target) -> its device (path, LABEL= or UUID= among
// the BlockDevices) -> mount(2) on the target (created as needed) -> MountSpecStatus. The
// fstab of this system. On delete the status is torn down before the unmount, so a
// dependant holding it with a finalizer delays the unmount (spec-controller.ts).
import { mkdirSync, readFileSync } from 'node:fs';
import type { Native } from '../../native/index.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { MS, parseMounts } from '../../machinery/sys/mount-table.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { type BlockDeviceSpec, type MountSpecSpec, type MountSpecStatusSpec } from './types.ts';
import {
  BLOCK_DEVICE_TYPE, MERGED_MOUNT_SPEC_TYPE, MOUNT_SPEC_STATUS_TYPE, STORAGE_NS,
} from '../../proto/gen/resource-types.ts';

const FLAG_OPTIONS: Record<string, number> = {
  ro: MS.RDONLY, nosuid: MS.NOSUID, nodev: MS.NODEV, noexec: MS.NOEXEC, noatime: MS.NOATIME, relatime: MS.RELATIME,
  sync: MS.SYNCHRONOUS,
};

/** Mount options -> mount(2) flags and the filesystem's own data string. */
export function mountOptions(options: readonly string[] = []): { flags: number; data: string } {
  let flags = 0;
  const data: string[] = [];
  for (const o of options) {
    if (o in FLAG_OPTIONS) flags |= FLAG_OPTIONS[o]!;
    else if (o !== 'rw' && o !== 'defaults') data.push(o);
  }
  return { flags, data: data.join(',') };
}

export function findDevice(source: string, devices: Iterable<BlockDeviceSpec>): BlockDeviceSpec | undefined {
  const all = [...devices];
  if (source.startsWith('LABEL=')) return all.find((d) => d.label === source.slice(6));
  if (source.startsWith('UUID=')) return all.find((d) => d.uuid?.toLowerCase() === source.slice(5).toLowerCase());
  return all.find((d) => d.devPath === source);
}

/** What the mount controller does to the system: mount, unmount, and what is mounted where. */
export interface MountKernel {
  mounted(): Set<string>;
  mount(device: string, target: string, fstype: string, flags: number, data: string): void;
  unmount(target: string): void;
}

export function nativeMountKernel(n: () => Native, mounts = '/proc/self/mounts'): MountKernel {
  return {
    mounted: () => new Set(parseMounts(readFileSync(mounts, 'utf8')).map((m) => m.target)),
    mount: (device, target, fstype, flags, data) => {
      mkdirSync(target, { recursive: true });
      n().mount(device, target, fstype, flags, data);
    },
    unmount: (target) => n().umount2(target),
  };
}

interface World { devices: BlockDeviceSpec[]; mounted: Set<string> }

export function mountSpecController(kernel: MountKernel) {
  const describe = (s: MountSpecSpec): MountSpecStatusSpec => ({
    target: s.target, source: s.source, layer: layerOf(s),
  });
  return specController<MountSpecSpec, MountSpecStatusSpec, World>({
    name: 'mount-spec', namespace: STORAGE_NS, specType: MERGED_MOUNT_SPEC_TYPE, statusType: MOUNT_SPEC_STATUS_TYPE,
    inputs: [{ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, kind: 'weak' }],
    // /proc/self/mounts once per reconcile, kept current below as this reconcile mounts and unmounts.
    observe: async (ctx) => ({
      devices: (await ctx.state.list({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE }))
        .map((r) => r.spec as BlockDeviceSpec),
      mounted: kernel.mounted(),
    }),
    apply(_id, s, prev, world) {
      const device = findDevice(s.source, world.devices);
      const kept = prev?.applied ? { applied: prev.applied } : {};
      if (!device) {
        return { ...describe(s), state: 'pending', error: `no block device matches ${s.source} (yet)`, ...kept };
      }
      const fstype = s.fstype ?? device.fstype;
      const base = { ...describe(s), device: device.devPath, ...(fstype ? { fstype } : {}) };
      if (world.mounted.has(s.target)) {
        return { ...base, state: 'applied', applied: prev?.applied ?? { device: device.devPath, target: s.target } };
      }
      if (!fstype) {
        return {
          ...base, state: 'error', error: `cannot tell the filesystem on ${device.devPath}; set fstype`, ...kept,
        };
      }
      const { flags, data } = mountOptions(s.options);
      kernel.mount(device.devPath, s.target, fstype, flags, data);
      world.mounted.add(s.target);
      return { ...base, state: 'applied', applied: { device: device.devPath, target: s.target } };
    },
    failed: (_id, s, prev, error) => ({
      ...describe(s), state: 'error', error, ...(prev?.applied ? { applied: prev.applied } : {}),
    }),
    undo(_id, prev, world) {
      if (!prev.applied || !world.mounted.has(prev.applied.target)) return;
      kernel.unmount(prev.applied.target);
      world.mounted.delete(prev.applied.target);
    },
  });
}
