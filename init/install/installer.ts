// installer: the engine's controller of InstallRequests (config namespace, admins only). A machine
// booted from the ISO or over PXE writes this build's disk to the disk a request selects, checks
// what it wrote, puts its machine config on the new disk's STATE, and reboots when asked. Each
// request's progress is an InstallStatus of the same id. It runs in PID 1, not in a plugin: the
// machine config it copies (the API's CA, sensitive files) is the engine's to hand out.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrno } from '../../native/errno.ts';
import type { BlockDeviceSpec, InstallRequestSpec, InstallStatusSpec } from '../../proto/gen/spec-types.ts';
import type { State } from '../../cosi/state/state.ts';
import { statusWriter } from '../../cosi/state/status-writer.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import { requestController } from '../../cosi/controller/request-controller.ts';
import { fileConfigStore, type SavedConfig } from '../../machinery/config/saved-config.ts';
import type { InstallManifest } from '../../machinery/disk/install-manifest.ts';
import { STATE_LABEL } from '../../machinery/disk/labels.ts';
import type { Logger } from '../../machinery/log.ts';
import { writeFileAtomicAsync } from '../../machinery/sys/atomic-write.ts';
import { MS, parseMounts } from '../../machinery/sys/mount-table.ts';
import { listBlockDevicesAsync } from '../../machinery/sys/sysfs-block.ts';
import { selectDisk } from './disk-selector.ts';
import { formatInstallRecord, INSTALL_RECORD_FILE, parseInstallRecord, type InstallRecord } from './install-record.ts';
import { fetchPayload, findMedium, type MountOps, type PayloadSource } from './payload-source.ts';
import { targetProblems, type TargetFacts } from './target-check.ts';
import { verifyImage, writeImage } from './write-image.ts';
import { CONFIG_NS, INSTALL_REQUEST_TYPE, INSTALL_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

/**
 * The kernel calls of an install, every one off PID 1's thread: a disk can hold them for seconds (under TCG on
 * 256 MiB, with the host busy, a PXE install's API went unanswered 1.7 s at BLKFLSBUF and 5.6 s while it
 * configured STATE, when they ran on that thread), and the API answers meanwhile.
 */
export interface InstallerKernel extends MountOps {
  /** BLKRRPART: the kernel reads the new partition table. */
  rereadPartitions(disk: string): Promise<void>;
  /** BLKFLSBUF: the disk's cached pages dropped, so that reading it back reads the disk. */
  flushBuffers(disk: string): Promise<void>;
  sync(): Promise<void>;
}

/** What the installer acts on: PID 1's kernel, the machine's identity, its reboot. */
export interface InstallerMachine {
  kernel: InstallerKernel;
  machineId: () => string | undefined;
  /** Runs the graceful reboot (PID 1's shutdown). */
  reboot: (why: string) => void;
}

export interface InstallerOptions {
  state: State;
  log: Logger;
  owner: string;
  /** The machine config as it would be persisted now, and how many resources it holds. */
  machineConfig: () => { saved: SavedConfig; resources: number };
  /** The machine, or why this engine installs nothing (a host running `serve`): each request is refused so. */
  machine: InstallerMachine | { refuse: string };
  paths?: Partial<InstallerPaths>;
  /** How often progress is written to the status (default 500 ms). */
  progressMs?: number;
}

export interface InstallerPaths {
  sys: string; dev: string; mounts: string;
  /** Where the installer mounts the medium and the new disk's STATE. */
  work: string;
}

const DEFAULT_PATHS: InstallerPaths = {
  sys: '/sys/class/block', dev: '/dev', mounts: '/proc/self/mounts',
  work: '/run/install',
};

/** How long the kernel may take to show the new partitions once told to read the table. */
const PARTITIONS_MS = 10_000;

class Refused extends Error {}

/** The installer: each InstallRequest carried out, one at a time, on the engine's controller runtime. */
export function installRequests(o: InstallerOptions): Controller {
  const paths = { ...DEFAULT_PATHS, ...o.paths };
  return requestController<InstallRequestSpec, InstallStatusSpec>({
    name: 'install-requests', owner: o.owner, oneAtATime: true,
    request: { namespace: CONFIG_NS, type: INSTALL_REQUEST_TYPE },
    status: { namespace: RUNTIME_NS, type: INSTALL_STATUS_TYPE },
    handle: (id, spec) => install(o, paths, id, spec),
    busy: (_id, running) => ({
      ...blank(), phase: 'failed', error: `install "${running}" is running; one install at a time`,
      startedAt: new Date().toISOString(), finishedAt: new Date().toISOString(),
    }),
  });
}

const blank = (): InstallStatusSpec => ({
  disk: '', source: '', version: '', bytesDone: 0, bytesTotal: 0, config: '', error: '', diskTouched: false,
});

const statusOf = (o: InstallerOptions, id: string) => statusWriter<InstallStatusSpec>({
  state: o.state, pointer: { namespace: RUNTIME_NS, type: INSTALL_STATUS_TYPE, id }, owner: o.owner,
  minMs: o.progressMs ?? 500, onError: (e) => o.log.warn(`install "${id}": cannot write its status: ${e.message}`),
});

async function install(o: InstallerOptions, p: InstallerPaths, id: string, spec: InstallRequestSpec): Promise<void> {
  const machine = 'kernel' in o.machine ? o.machine : undefined;
  const log = o.log.child(`install ${id}`);
  let status: InstallStatusSpec = { ...blank(), phase: 'checking', startedAt: new Date().toISOString() };
  const writer = statusOf(o, id);
  const set = (change: Partial<InstallStatusSpec>, force = true): Promise<unknown> => {
    status = { ...status, ...change };
    return writer.write(status, force);
  };
  await set({});
  let payload: PayloadSource | undefined;
  try {
    if (!machine) throw new Refused((o.machine as { refuse: string }).refuse);
    // One reading of the devices (each probed by its first bytes) serves the medium's search and the choice.
    const devices = await listBlockDevicesAsync(p.sys, p.dev);
    const found = spec.source ? await fetchPayload(spec.source)
      : await findMedium(machine.kernel, [...devices.values()], join(p.work, 'medium'));
    if (found instanceof Error) throw new Refused(found.message);
    payload = found;
    const m = payload.manifest;
    await set({ source: payload.origin, version: m.version, bytesTotal: m.disk.size });
    const chosen = selectDisk(spec.disk, [...devices.values()], payload.device);
    if (chosen.error !== undefined) throw new Refused(chosen.error);
    const disk = chosen.disk;
    await set({ disk: disk.devPath });
    const facts = await targetFacts(machine, p, disk, devices, m.disk.size);
    const problems = targetProblems(facts, spec.wipe);
    if (problems.length) throw new Refused(problems.join('; '));
    log.info(`writing ${m.version} (${m.disk.size} bytes) from ${payload.origin} to ${disk.devPath}`);
    // The disk's own pages only: drop_caches would drop every program's too, and on 256 MiB they all fault back
    // in at once (a PXE install's API stopped answering for over 10 s while verifying).
    const dropCache = () => machine.kernel.flushBuffers(disk.devPath);
    await set({ phase: 'writing', diskTouched: true });
    await writeImage({
      compressed: await payload.openDisk(), target: disk.devPath, targetBytes: disk.sizeBytes, image: m.disk,
      source: 'the medium or the download',
      progress: (n) => void set({ bytesDone: n }, false), dropCache,
    });
    await set({ bytesDone: m.disk.size }); // the last progress may have fallen between two reports
    await set({ phase: 'verifying', bytesDone: 0 });
    await verifyImage({
      target: disk.devPath, size: m.disk.size, sha256: m.disk.sha256,
      dropCache, progress: (n) => void set({ bytesDone: n }, false),
    });
    await set({ bytesDone: m.disk.size });
    await set({ phase: 'configuring' });
    const config = await putConfig(o, machine, p, disk, m, log);
    await set({ phase: 'done', config, finishedAt: new Date().toISOString() });
    log.info(`installed ${m.version} on ${disk.devPath}; ${config}`);
  } catch (e) {
    const refused = e instanceof Refused;
    const error = refused ? `refused: ${e.message}` : `${status.phase ?? 'checking'}: ${(e as Error).message}`;
    log.error(error + (status.diskTouched ? ` (${status.disk} was partly written: install again)` : ''));
    await set({ phase: 'failed', error, finishedAt: new Date().toISOString() });
    return;
  } finally { await payload?.close(); }
  if (spec.reboot) machine?.reboot(`install "${id}" done: booting ${status.disk}`);
}

/** What is on the chosen disk: partitions, mounts, and the install record of a STATE it holds. */
async function targetFacts(
  o: InstallerMachine, p: InstallerPaths, disk: BlockDeviceSpec, devices: Map<string, BlockDeviceSpec>,
  imageBytes: number,
): Promise<TargetFacts> {
  const partitions = (disk.partitions ?? []).flatMap((n) => devices.get(n) ?? []);
  const own = new Set([disk.devPath, ...partitions.map((d) => d.devPath)]);
  const mounted = parseMounts(readFileSync(p.mounts, 'utf8')).filter((m) => own.has(m.source))
    .map((m) => ({ device: m.source, target: m.target }));
  const stateDev = partitions.find((d) => d.label === STATE_LABEL);
  const machineId = o.machineId();
  const facts: TargetFacts = { disk, partitions, mounted, imageBytes, ...(machineId ? { machineId } : {}) };
  if (!stateDev || mounted.length) return facts;
  const record = await readRecord(o.kernel, stateDev, join(p.work, 'probe'));
  return { ...facts, state: { device: stateDev.devPath, ...record } };
}

/**
 * The install record on a STATE filesystem, mounted read-only while it is read. ext3/4 without journal replay
 * (noload): a read-only mount still replays a dirty journal, which would write to a disk that may be refused.
 */
async function readRecord(
  k: MountOps, dev: BlockDeviceSpec, dir: string,
): Promise<{ record?: InstallRecord; unreadable?: string }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fstype = dev.fstype ?? 'ext4';
  try {
    await k.mount(dev.devPath, dir, fstype, MS.RDONLY | MS.NOSUID | MS.NODEV | MS.NOEXEC,
      fstype === 'ext3' || fstype === 'ext4' ? 'noload' : undefined);
  } catch (e) { return { unreadable: `cannot mount it: ${(e as Error).message}` }; }
  try {
    const where = `${dev.devPath}:/${INSTALL_RECORD_FILE}`;
    const r = parseInstallRecord(readFileSync(join(dir, INSTALL_RECORD_FILE), 'utf8'), where);
    return r instanceof Error ? { unreadable: r.message } : { record: r };
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return {};
    return { unreadable: (e as Error).message };
  } finally { await k.umount2(dir); } // not lazily: the disk must be free before it is opened O_EXCL
}

/** BLKRRPART, again while the kernel says EBUSY: a partition of the old table may be open for a moment (a probe). */
async function rereadPartitions(k: InstallerKernel, disk: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await k.rereadPartitions(disk);
      return;
    } catch (e) {
      if (!isErrno(e, 'EBUSY') || tries >= 20) throw e;
      await sleep(250);
    }
  }
}

/** The new disk's STATE, found once the kernel has read the table, given the machine config and the record. */
async function putConfig(
  o: InstallerOptions, machine: InstallerMachine, p: InstallerPaths, disk: BlockDeviceSpec, m: InstallManifest,
  log: Logger,
): Promise<string> {
  await rereadPartitions(machine.kernel, disk.devPath);
  const name = disk.devPath.replace(/^.*\//, '');
  const deadline = Date.now() + PARTITIONS_MS;
  const findState = async () => [...(await listBlockDevicesAsync(p.sys, p.dev)).values()]
    .find((d) => d.parent === name && d.label === STATE_LABEL);
  let state: BlockDeviceSpec | undefined;
  while (!(state = await findState())) {
    if (Date.now() > deadline) {
      throw new Error(`no partition of ${disk.devPath} labelled ${STATE_LABEL} ${PARTITIONS_MS / 1000} s `
        + 'after BLKRRPART');
    }
    await sleep(100);
  }
  const dir = join(p.work, 'state');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await machine.kernel.mount(state.devPath, dir, state.fstype ?? 'ext4',
    MS.NOSUID | MS.NODEV | MS.NOEXEC | MS.NOATIME);
  try {
    const { saved, resources } = o.machineConfig();
    await fileConfigStore(dir).save(saved);
    const record: InstallRecord = {
      machineId: machine.machineId() ?? '', version: m.version, commit: m.commit,
      installedAt: new Date().toISOString(), disk: disk.devPath,
    };
    await writeFileAtomicAsync(join(dir, INSTALL_RECORD_FILE), formatInstallRecord(record), 0o644);
    log.info(`machine config (${resources} resources) written to ${state.devPath}`);
    return `${resources} resources (from ${saved.source}) on ${state.devPath}`;
  } finally {
    try {
      await machine.kernel.umount2(dir);
    } finally {
      await machine.kernel.sync();
    }
  }
}
