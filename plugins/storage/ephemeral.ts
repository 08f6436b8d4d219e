// ephemeral: the disk image's EPHEMERAL partition (PID 1 mounts it on /var before anything
// runs: init/boot/state-partition.ts), grown to the end of its disk at first boot, with no
// tool binaries:
// the GPT is read and rewritten here (machinery/disk/gpt.ts: backup moved to the new end, the
// partition enlarged), the kernel is told the partition's new size (BLKPG), and the ext4 is
// grown while mounted (EXT4_IOC_RESIZE_FS). Only a GPT partition named EPHEMERAL that holds
// an ext4 labelled EPHEMERAL and is the disk's last partition is ever touched.
import { closeSync, fsyncSync, openSync, readFileSync, readSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import {
  decodeGpt, encodeGpt, growGpt, HEAD_SECTORS, SECTOR, TAIL_SECTORS, usableRange,
} from '../../machinery/disk/gpt.ts';
import { EPHEMERAL_LABEL as EPHEMERAL, EPHEMERAL_MOUNT } from '../../machinery/disk/labels.ts';
import { parseMounts } from '../../machinery/sys/mount-table.ts';
import { extGeometry } from '../../machinery/sys/superblock.ts';
import type { Native } from '../../native/index.ts';
import { outputSet } from '../sdk/output-set.ts';
import { type BlockDeviceSpec, type EphemeralStatusSpec } from './types.ts';
import { BLOCK_DEVICE_TYPE, EPHEMERAL_STATUS_TYPE, STORAGE_NS } from '../../proto/gen/resource-types.ts';

/** What growing needs from the system (a fake in unit tests, the real disk in QEMU). */
export interface EphemeralKernel {
  /** A block device's size in 512-byte sectors, and a partition's number (sysfs). */
  sectors(name: string): number;
  partitionNumber(name: string): number;
  read(devPath: string, at: number, length: number): Buffer;
  /** Writes and flushes to the device. */
  write(devPath: string, at: number, data: Buffer): void;
  resizePartition(disk: string, number: number, startBytes: number, lengthBytes: number): void;
  growExt4(mountPoint: string, blocks: number): void;
  /** The device mounted on `target`, if any. */
  mountedDevice(target: string): string | undefined;
  /** Bytes an unprivileged writer may still use on the filesystem mounted at `target` (statfs f_bavail). */
  availableBytes(target: string): number;
}

/** Below this, /var is called full: an extension image or an upgrade no longer fits. */
export const FULL_BELOW_BYTES = 16 << 20;
/** How often free space is looked at again (nothing notifies a filling filesystem). */
export const SPACE_CHECK_MS = 30_000;

/** What a full /var means, or undefined while it has room. */
export function spaceProblem(availableBytes: number): string | undefined {
  if (availableBytes >= FULL_BELOW_BYTES) return undefined;
  return `${EPHEMERAL_MOUNT} is full: ${Math.floor(availableBytes / 1024)} KiB left; extension fetches, upgrade `
    + `staging and files on ${EPHEMERAL_MOUNT} fail until space is freed`;
}

export function nativeEphemeralKernel(n: () => Native, sys = '/sys/class/block'): EphemeralKernel {
  const number = (p: string) => Number(readFileSync(p, 'utf8').trim());
  return {
    sectors: (name) => number(join(sys, name, 'size')),
    partitionNumber: (name) => number(join(sys, name, 'partition')),
    read(devPath, at, length) {
      const fd = openSync(devPath, 'r');
      try {
        const b = Buffer.alloc(length);
        return b.subarray(0, readSync(fd, b, 0, length, at));
      } finally { closeSync(fd); }
    },
    write(devPath, at, data) {
      const fd = openSync(devPath, 'r+');
      try {
        writeSync(fd, data, 0, data.length, at);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
    resizePartition: (disk, num, start, length) => n().resizePartition(disk, num, start, length),
    growExt4: (target, blocks) => n().growExt4(target, blocks),
    mountedDevice: (target) => parseMounts(readFileSync('/proc/self/mounts', 'utf8'))
      .filter((m) => m.target === target).at(-1)?.source,
    availableBytes: (target) => {
      const s = statfsSync(target);
      return s.bavail * s.bsize;
    },
  };
}

/**
 * Grows the partition (GPT, then the kernel's view) when its disk has room after it.
 * Returns the partition's size in bytes afterwards, and whether it grew.
 */
export function growPartition(k: EphemeralKernel, part: BlockDeviceSpec & { name: string }): {
  bytes: number; grew: boolean;
} {
  const diskName = part.parent!;
  const disk = `/dev/${diskName}`;
  const sectors = k.sectors(diskName);
  const head = k.read(disk, 0, HEAD_SECTORS * SECTOR);
  const gpt = decodeGpt(head, sectors);
  const entry = gpt.partitions.find((p) => p.name === EPHEMERAL);
  if (!entry) throw new Error(`${disk} has no GPT partition named ${EPHEMERAL}`);
  const last = usableRange(sectors).last;
  if (entry.lastLba >= last) return { bytes: (entry.lastLba - entry.firstLba + 1) * SECTOR, grew: false };
  const grown = encodeGpt(growGpt(gpt, sectors, EPHEMERAL), head.subarray(0, 440));
  // The backup first: until the primary is rewritten, the old primary still describes the disk.
  k.write(disk, (sectors - TAIL_SECTORS) * SECTOR, grown.tail);
  k.write(disk, 0, grown.head);
  const bytes = (last - entry.firstLba + 1) * SECTOR;
  k.resizePartition(disk, k.partitionNumber(part.name), entry.firstLba * SECTOR, bytes);
  return { bytes, grew: true };
}

export function ephemeralController(k: EphemeralKernel, o: { spaceCheckMs?: number } = {}): Controller {
  return {
    name: 'ephemeral',
    inputs: () => [{ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE, kind: 'weak' }],
    outputs: () => [{ type: EPHEMERAL_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      let partition: { device: string; bytes: number; grew: boolean } | undefined;
      let filesystemGrownTo: number | undefined;
      let error: string | undefined;
      const recheck = setInterval(() => ctx.requestReconcile(), o.spaceCheckMs ?? SPACE_CHECK_MS);
      let lastProblem: string | undefined;
      try {
        while (await ctx.next()) {
          const out = outputSet(ctx, [[STORAGE_NS, EPHEMERAL_STATUS_TYPE]]);
          const devices = await ctx.state.list({ namespace: STORAGE_NS, type: BLOCK_DEVICE_TYPE }) as
            Resource<BlockDeviceSpec>[];
          const candidates = devices.filter((d) => d.spec.partition && d.spec.parent && d.spec.label === EPHEMERAL
            && d.spec.fstype === 'ext4');
          // Only the one PID 1 put on /var is this machine's: a live system's disks, or one it installs to, are not.
          const onVar = k.mountedDevice(EPHEMERAL_MOUNT);
          const found = candidates.find((d) => d.spec.devPath === onVar) ?? candidates[0];
          if (!found) {
            await out.cleanup();
            continue;
          }
          const part = { ...found.spec, name: found.metadata.id };
          const mounted = onVar === part.devPath;
          if (mounted && partition?.device !== part.devPath && !error) {
            try {
              partition = { device: part.devPath, ...growPartition(k, part) };
            } catch (e) {
              error = `the partition cannot grow: ${(e as Error).message}`;
              ctx.log.warn(`${part.devPath}: ${error}; it is used as it is`);
            }
          }
          const partitionBytes = partition?.bytes ?? part.sizeBytes;
          const geometry = extGeometry(k.read(part.devPath, 0, 4096));
          let filesystemBytes = Math.max(filesystemGrownTo ?? 0, geometry ? geometry.blocks * geometry.blockSize : 0);
          if (mounted && geometry && filesystemGrownTo === undefined && !error
            && filesystemBytes + geometry.blockSize <= partitionBytes) {
            const blocks = Math.floor(partitionBytes / geometry.blockSize);
            try {
              k.growExt4(EPHEMERAL_MOUNT, blocks);
              filesystemGrownTo = filesystemBytes = blocks * geometry.blockSize;
              const mib = Math.round(partitionBytes / 2 ** 20);
              ctx.log.info(`${part.devPath}: grown to ${mib} MiB on ${EPHEMERAL_MOUNT}`);
            } catch (e) {
              error = `the filesystem cannot grow: ${(e as Error).message}`;
              ctx.log.warn(`${part.devPath}: ${error}; it is used as it is`);
            }
          }
          const grew = [partition?.grew ? 'partition' : '', filesystemGrownTo !== undefined ? 'filesystem' : '']
            .filter(Boolean).join(' and ');
          const available = mounted ? k.availableBytes(EPHEMERAL_MOUNT) : undefined;
          const full = available === undefined ? undefined : spaceProblem(available);
          if (full && !lastProblem) ctx.log.warn(full);
          lastProblem = full;
          const status: EphemeralStatusSpec = {
            state: error ? 'error' : mounted ? 'applied' : 'pending', device: part.devPath, disk: `/dev/${part.parent}`,
            diskBytes: k.sectors(part.parent!) * SECTOR, partitionBytes, filesystemBytes, grew,
            ...(error ? { error } : mounted ? {} : { error: `waiting for ${part.devPath} on ${EPHEMERAL_MOUNT}` }),
            ...(available !== undefined ? { availableBytes: available } : {}), ...(full ? { spaceProblem: full } : {}),
          };
          await out.put(STORAGE_NS, EPHEMERAL_STATUS_TYPE, 'ephemeral', status);
          await out.cleanup();
        }
      } finally { clearInterval(recheck); }
    },
  };
}
