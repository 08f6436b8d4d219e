// mount-spec: MountSpec -> find its device (path, LABEL= or UUID= among the
// BlockDevices) -> mount(2) on the target (created as needed) -> MountStatus.
// The fstab of this system. On destroy the status is torn down first: whoever
// depends on the mount holds the status with a finalizer, and the unmount waits.
import { mkdirSync, readFileSync } from 'node:fs';
import type { Controller } from '../../init/cosi/controller/contract.ts';
import { MS, parseMounts } from '../../init/boot/mounts.ts';
import type { Native } from '../../native/index.ts';
import { BLOCK_DEVICE_TYPE, MOUNT_SPEC_TYPE, MOUNT_STATUS_TYPE, STORAGE_NS, type BlockDeviceSpec, type MountSpecSpec, type MountStatusSpec } from './types.ts';

const FLAG_OPTIONS: Record<string, number> = { ro: MS.RDONLY, nosuid: MS.NOSUID, nodev: MS.NODEV, noexec: MS.NOEXEC, noatime: 1024, relatime: 1 << 21, sync: 16 };

/** Mount options -> mount(2) flags and the filesystem's own data string. */
export function mountOptions(options: readonly string[] = []): { flags: number; data: string } {
  let flags = 0;
  const data: string[] = [];
  for (const o of options) { if (o in FLAG_OPTIONS) flags |= FLAG_OPTIONS[o]!; else if (o !== 'rw' && o !== 'defaults') data.push(o); }
  return { flags, data: data.join(',') };
}

export function findDevice(source: string, devices: ReadonlyMap<string, BlockDeviceSpec>): BlockDeviceSpec | undefined {
  const all = [...devices.values()];
  if (source.startsWith('LABEL=')) return all.find((d) => d.label === source.slice(6));
  if (source.startsWith('UUID=')) return all.find((d) => d.uuid?.toLowerCase() === source.slice(5).toLowerCase());
  return all.find((d) => d.devPath === source);
}

const mountedTargets = () => new Set(parseMounts(readFileSync('/proc/self/mounts', 'utf8')).map((m) => m.target));

export function mountController(n: () => Native): Controller {
  return {
    name: 'mount',
    inputs: () => [
      { namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE, kind: 'strong' },
      { namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, kind: 'weak' },
      { namespace: STORAGE_NS, type: MOUNT_STATUS_TYPE, kind: 'weak' }, // a dependant letting go
    ],
    outputs: () => [{ type: MOUNT_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const sp = (id: string) => ({ namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE, id });
      const st = (id: string) => ({ namespace: STORAGE_NS, type: MOUNT_STATUS_TYPE, id });
      while (await ctx.next()) {
        const devices = new Map((await ctx.state.list({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE })).map((r) => [r.metadata.id, r.spec as BlockDeviceSpec]));
        const keep = new Set<string>();
        const statuses = new Set((await ctx.state.list({ namespace: STORAGE_NS, type: MOUNT_STATUS_TYPE })).map((r) => r.metadata.id));
        const mounted = mountedTargets(); // kept up to date below as this reconcile mounts and unmounts
        for (const r of await ctx.state.list({ namespace: STORAGE_NS, type: MOUNT_SPEC_TYPE })) {
          const id = r.metadata.id;
          const spec = r.spec as MountSpecSpec;
          keep.add(id);
          if (r.metadata.phase === 'tearingDown') {
            if (!r.metadata.finalizers.includes('mount')) continue;
            if (statuses.has(id) && !(await ctx.state.teardown(st(id)))) continue; // still held by a dependant
            if (mounted.has(spec.target)) {
              try { n().umount2(spec.target); mounted.delete(spec.target); } catch (e) { ctx.log.warn(`unmounting ${spec.target}: ${(e as Error).message}; will retry`); continue; }
            }
            if (statuses.has(id)) await ctx.state.destroy(st(id));
            await ctx.state.removeFinalizer(sp(id));
            continue;
          }
          if (!r.metadata.finalizers.includes('mount')) await ctx.state.addFinalizer(sp(id));
          const device = findDevice(spec.source, devices);
          let status: MountStatusSpec;
          if (!device) {
            status = { state: 'pending', target: spec.target, error: `no block device matches ${spec.source} (yet)` };
          } else if (mounted.has(spec.target)) {
            status = { state: 'mounted', target: spec.target, device: device.devPath, ...(device.fstype ? { fstype: spec.fstype ?? device.fstype } : {}) };
          } else {
            const fstype = spec.fstype ?? device.fstype;
            if (!fstype) status = { state: 'error', target: spec.target, device: device.devPath, error: `cannot tell the filesystem on ${device.devPath}; set fstype` };
            else {
              try {
                mkdirSync(spec.target, { recursive: true });
                const { flags, data } = mountOptions(spec.options);
                n().mount(device.devPath, spec.target, fstype, flags, data);
                mounted.add(spec.target);
                status = { state: 'mounted', target: spec.target, device: device.devPath, fstype };
              } catch (e) {
                status = { state: 'error', target: spec.target, device: device.devPath, fstype, error: (e as Error).message };
              }
            }
          }
          await ctx.state.put(st(id), status);
        }
        await ctx.state.cleanup({ namespace: STORAGE_NS, type: MOUNT_STATUS_TYPE }, keep);
      }
    },
  };
}
