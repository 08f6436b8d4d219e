// upgrader: the engine's controller of UpgradeRequests and RollbackRequests (config namespace, admins
// only). An upgrade's bundle arrives (fetched from its URL, or uploaded in chunks through UpgradeService)
// and is checked as it arrives by a BundleReader: the signature against the trusted keys and the version
// against the policy before any part is kept, each part's sha256 at its end. The parts are staged on /var;
// only a bundle checked whole reaches the ESP, where it replaces the slot not running, and the loader is
// told to try that slot. A disk made with the disk form (SYSTEM-A and SYSTEM-B) takes a bundle's disk form: its
// image is written to the slot's SYSTEM partition and read back, then the slot gets the initramfs that finds it.
// Each request's progress is an UpgradeStatus of the same id, also kept on the ESP
// (boot-partition.ts) for the system that boots next (trial.ts).
import {
  closeSync, constants, createReadStream, mkdirSync, openSync, readFileSync, readSync, rmSync, statfsSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { RollbackRequestSpec, UpgradeRequestSpec, UpgradeStatusSpec } from '../../proto/gen/spec-types.ts';
import type { State } from '../../cosi/state/state.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { statusWriter, type StatusWriter } from '../../cosi/state/status-writer.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import { requestController } from '../../cosi/controller/request-controller.ts';
import {
  DISK_FORM_PARTS, encodeSlotEnv, MAX_TRIES, otherSlot, rollBack, SLOT_FILES, trySlot, type Slot,
} from '../../machinery/disk/boot-slots.ts';
import { systemLabel } from '../../machinery/disk/labels.ts';
import { BundleReader, type UpgradeManifest } from '../../machinery/disk/upgrade-bundle.ts';
import {
  decodePayload, extensionFile, isPayloadFile, PAYLOAD_CONFIG, PAYLOAD_INDEX, payloadFiles,
} from '../../machinery/disk/slot-payload.ts';
import type { Logger } from '../../machinery/log.ts';
import { httpOpen } from '../../machinery/sys/http-get.ts';
import { VERSION } from '../../machinery/version.ts';
import type { BootPartition } from './boot-partition.ts';
import { currentTrust } from './trust.ts';
import { compareVersions } from '../../machinery/update/versions.ts';
import { testPause } from '../../machinery/sys/test-pause.ts';
import { zstdContentSize, ZSTD_HEADER_MAX } from '../../machinery/sys/zstd-frame.ts';
import { isErrno } from '../../native/errno.ts';
import { verifyImage, writeImage } from '../install/write-image.ts';
import type { SystemPartition } from './system-partition.ts';
import {
  CONFIG_NS, ROLLBACK_REQUEST_TYPE, RUNTIME_NS, UPGRADE_REQUEST_TYPE, UPGRADE_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';

/** What the upgrader acts on: the booted disk's ESP and PID 1's reboot. */
export interface UpgradeMachine {
  boot: BootPartition;
  reboot: (why: string) => void;
  /** Where bundles are staged (on /var). */
  stagingDir: string;
  /** The booted disk's SYSTEM partitions, where a disk-form slot's image goes (absent: never the disk form). */
  systemDisk?: SystemDisk;
}

export interface SystemDisk {
  /** A slot's SYSTEM partition; undefined when the disk has none (made before the disk form). Throws why not known. */
  partition(slot: Slot): SystemPartition | undefined;
  /** Drops a device's cached pages (BLKFLSBUF), so that writing it does not crowd out the programs' own. */
  flushBuffers(device: string): Promise<void>;
}

export interface UpgraderOptions {
  state: State;
  log: Logger;
  owner: string;
  /** The machine, or why this engine upgrades nothing (a host, a live system): each request is refused so. */
  machine: UpgradeMachine | { refuse: string };
  /** After a slot changed: publish the versions again. */
  slotsChanged: () => Promise<void>;
  progressMs?: number;
  /** How long an upload may send nothing (tests shorten it). */
  idleMs?: number;
}

export const DEFAULT_TRIES = 1;
/** An upload that sends nothing for this long is abandoned, so that it does not hold up the next. */
export const UPLOAD_IDLE_MS = 60_000;
export const DEFAULT_HEALTH_TIMEOUT_SECONDS = 300;
/** The parts a bundle must carry, by the slot file each becomes. */
const PARTS = { kernel: SLOT_FILES.kernel, initramfs: SLOT_FILES.initramfs };
/** How much of the staged image is written between two looks at a test pause (upgrade-system-write). */
const PAUSE_AFTER = 16 << 20;

/**
 * What is wrong with a bundle's part names: the system's two, the disk form's two (both or neither), and an
 * appliance's payload with its index.
 */
export function partsProblem(names: readonly string[]): string | undefined {
  const listed = [...names].sort().join(', ');
  const disk = Object.values(DISK_FORM_PARTS);
  const carries = `a bundle carries ${Object.values(PARTS).join(' and ')}, optionally the disk form's `
    + `${disk.join(' and ')}, and an appliance's payload (${PAYLOAD_INDEX}, ${PAYLOAD_CONFIG}, `
    + `${extensionFile('NAME')})`;
  const system = new Set<string>([...Object.values(PARTS), ...disk]);
  const other = names.filter((n) => !system.has(n));
  if (!Object.values(PARTS).every((p) => names.includes(p)) || other.some((n) => !isPayloadFile(n))
    || new Set(names).size !== names.length) return `parts ${listed}; ${carries}`;
  const diskParts = disk.filter((p) => names.includes(p));
  if (diskParts.length === 1) {
    return `parts ${listed}: the disk form's ${diskParts[0]} without its other part; ${carries}`;
  }
  if (other.length && !other.includes(PAYLOAD_INDEX)) return `parts ${listed}: a payload without its ${PAYLOAD_INDEX}`;
  return undefined;
}

/** A file's bytes that open it only once read: a write refused before it reads leaves nothing to open later. */
async function* readLater(file: string): AsyncGenerator<Buffer> {
  yield* createReadStream(file);
}

/** The way on when the disk form cannot be written: the bundle that writes no SYSTEM partition. */
const SELF_CONTAINED_WAY = 'upgrade with the self-contained bundle (npm run image -- --format upgrade-self-contained), '
  + 'whose slot holds its image in its initramfs';

/** What to say when `to` is mounted: the running system reads its image from it. */
const inUse = (to: SystemPartition, label: string) => `${label} (${to.devPath}) is in use: the running system reads `
  + `its image from it (its stage0 took the first partition holding that image); ${SELF_CONTAINED_WAY}`;

/** Why `to` cannot be written now: the kernel refuses an exclusive open of a mounted device (EBUSY). */
function busyProblem(to: SystemPartition, label: string): string | undefined {
  try {
    closeSync(openSync(to.devPath, constants.O_RDONLY | constants.O_EXCL));
  } catch (e) {
    if (isErrno(e, 'EBUSY')) return inUse(to, label);
    throw new Error(`cannot open ${to.devPath} (${label}): ${(e as Error).message}`, { cause: e });
  }
  return undefined;
}

/** Why a staged disk-form image cannot go to `to`: it does not declare its size, or does not fit. */
function imageFitProblem(staged: string, to: SystemPartition, label: string): string | undefined {
  const head = Buffer.alloc(ZSTD_HEADER_MAX);
  const fd = openSync(staged, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally { closeSync(fd); }
  const content = zstdContentSize(head);
  if (content.size === undefined) return `${DISK_FORM_PARTS.image}: ${content.why}`;
  if (content.size <= to.sizeBytes) return undefined;
  return `the system image (${(content.size / 1e6).toFixed(1)} MB) does not fit ${label} (${to.devPath}, `
    + `${(to.sizeBytes / 1e6).toFixed(1)} MB): ${SELF_CONTAINED_WAY}`;
}

/**
 * The payload files a staged bundle carries (none, or its index and every file the index names, each extension
 * of the sha256 the index says); throws naming what does not agree.
 */
function payloadOf(mf: UpgradeManifest, dir: string): string[] {
  const names = mf.parts.map((p) => p.name).filter(isPayloadFile);
  if (!names.length) return [];
  const index = decodePayload(readFileSync(join(dir, PAYLOAD_INDEX)), `the bundle's ${PAYLOAD_INDEX}`);
  if (index instanceof Error) throw index;
  const want = payloadFiles(index);
  if ([...want].sort().join() !== [...names].sort().join()) {
    throw new Error(`its ${PAYLOAD_INDEX} names ${want.join(', ')}; the bundle carries ${names.join(', ')}`);
  }
  for (const e of index.extensions) {
    const part = mf.parts.find((p) => p.name === extensionFile(e.name))!;
    if (part.sha256 !== e.sha256) {
      throw new Error(`${part.name}: sha256 ${part.sha256}, its ${PAYLOAD_INDEX} says ${e.sha256}`);
    }
  }
  return want;
}

export interface Upgrader {
  /** One chunk of an uploaded bundle at `offset`; what the machine holds after it. */
  upload(id: string, offset: number, data: Buffer): Promise<{ received: number; complete: boolean }>;
  /**
   * An upgrade the engine itself starts (the update poller, with a bundle TUF verified): `open` gives its bytes. Same
   * checks, UpgradeStatus and record as a request's; resolves once the bundle arrived whole or the upgrade failed.
   */
  upgradeFrom(id: string, spec: UpgradeRequestSpec, open: () => Promise<AsyncIterable<Buffer>>,
    expect?: { version: string }): Promise<void>;
  /** What runs now, as the Versions say it: the running slot's version (an appliance's own), else the software's. */
  runningVersion(): string;
  /** UpgradeRequests and RollbackRequests, for the engine's controller runtime. */
  controllers: Controller[];
  close(): void;
}

interface Session {
  id: string;
  spec: UpgradeRequestSpec;
  /** Where the target slot's image goes: the bundle carries the disk form and the disk has SYSTEM partitions. */
  system?: SystemPartition;
  reader: BundleReader;
  status: UpgradeStatusSpec;
  writer: StatusWriter<UpgradeStatusSpec>;
  /** The bundle arrived whole: the slot is being written (uploads are answered with complete). */
  done: boolean;
  failed?: string;
  idle?: NodeJS.Timeout;
  /** Settles `received` once the bundle arrived whole or the upgrade failed: its request can no longer be withdrawn. */
  settle(): void;
  received: Promise<void>;
}

/** A session's `received` promise and its settle. */
function receiving(): Pick<Session, 'settle' | 'received'> {
  let settle = () => {};
  const received = new Promise<void>((r) => {
    settle = r;
  });
  return { settle, received };
}

const now = () => new Date().toISOString();

/** The target slot's SYSTEM partition, if the machine's disk has one; throws why it cannot tell. */
function systemPartition(m: UpgradeMachine, target: Slot): SystemPartition | undefined {
  try {
    return m.systemDisk?.partition(target);
  } catch (e) {
    throw new Error(`cannot find ${systemLabel(target)}: ${(e as Error).message}`, { cause: e });
  }
}

export async function startUpgrader(o: UpgraderOptions): Promise<Upgrader> {
  let session: Session | undefined;
  const report = (s: Session, force = false) => s.writer.write({ ...s.status }, force);
  const writerOf = (id: string) => statusWriter<UpgradeStatusSpec>({
    state: o.state, pointer: { namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id }, owner: o.owner,
    minMs: o.progressMs ?? 500, onError: (e) => o.log.warn(`upgrade "${id}": status: ${e.message}`),
  });
  // What runs now, as the Versions say it: the running slot's version (an appliance's own), else the software's.
  const runningVersion = () =>
    ('boot' in o.machine ? o.machine.boot.slot(o.machine.boot.running)?.version : undefined) || VERSION;
  const blank = (source: string): UpgradeStatusSpec => ({
    phase: 'receiving', source, fromVersion: runningVersion(), version: '', slot: '', bytesReceived: 0, bytesWritten: 0,
    error: '', startedAt: now(), keyId: '',
  });

  const fail = async (s: Session, why: string) => {
    if (s.failed) return;
    s.failed = why;
    clearTimeout(s.idle);
    o.log.warn(`upgrade "${s.id}" failed: ${why}`);
    s.status = { ...s.status, phase: 'failed', error: why, finishedAt: now() };
    if ('boot' in o.machine) {
      rmSync(join(o.machine.stagingDir, s.id), { recursive: true, force: true });
      recordFailure(o.machine.boot, s);
    }
    if (session === s) session = undefined;
    await report(s, true);
    // After the report: whoever waits on it (the update poller) reads the failure in UpgradeStatus.
    s.settle();
  };

  /**
   * A failure after writeSlot wrote its record (phase writing): the record says it, so that the next boot reports why
   * rather than a power cut while writing.
   */
  const recordFailure = (boot: BootPartition, s: Session) => {
    try {
      const r = boot.readRecord().record;
      if (r?.id === s.id && r.status.phase === 'writing') boot.setRecord({ ...r, status: s.status });
    } catch (e) {
      o.log.warn(`upgrade "${s.id}": cannot record its failure on the ESP: ${(e as Error).message}`);
    }
  };

  const begin = async (id: string, spec: UpgradeRequestSpec, open?: () => Promise<AsyncIterable<Buffer>>,
    expect?: { version: string }) => {
    const s: Session = {
      id, spec, status: blank(spec.source || 'upload'), done: false, writer: writerOf(id),
      reader: new BundleReader([]), ...receiving(),
    };
    if (!('boot' in o.machine)) {
      await fail(s, o.machine.refuse);
      return;
    }
    // The same upgrade asked for again (its request written anew): it goes on; its status is not a refusal's.
    if (session?.id === id) return;
    if (session) {
      await fail(s, `upgrade "${session.id}" is in progress; one upgrade at a time`);
      return;
    }
    const m = o.machine;
    const loader = m.boot.loader();
    if (loader.trySlot) {
      await fail(s, `slot ${loader.trySlot} is being tried: wait until it is marked good or falls back`);
      return;
    }
    const target = otherSlot(m.boot.running);
    if (target === loader.defaultSlot) {
      await fail(s, `slot ${target} is the default and ${m.boot.running} is running: reboot into ${target}, or `
        + 'roll back, before upgrading');
      return;
    }
    const trust = await currentTrust(o.state).catch((e: Error) => e);
    if (trust instanceof Error) {
      await fail(s, `the trusted keys: ${trust.message}`);
      return;
    }
    const dir = join(m.stagingDir, id);
    s.status.slot = target;
    let unused = new Set<string>();
    s.reader = new BundleReader(trust.keys, {
      manifest: (mf) => {
        if (expect && mf.version !== expect.version) {
          throw new Error(`the bundle is version ${mf.version}; the release it was fetched as is ${expect.version}`);
        }
        if (!spec.allowDowngrade && compareVersions(mf.version, runningVersion()) < 0) {
          throw new Error(`version ${mf.version} is below the running ${runningVersion()}: refused (a downgrade is `
            + 'asked for: cosictl upgrade --allow-downgrade)');
        }
        if (trust.minVersion && compareVersions(mf.version, trust.minVersion) < 0) {
          throw new Error(`version ${mf.version} is below the minimum ${trust.minVersion} (UpgradePolicy): refused`);
        }
        const names = mf.parts.map((p) => p.name);
        const problem = partsProblem(names);
        if (problem) throw new Error(problem);
        encodeSlotEnv({ cmdline: mf.cmdline, version: mf.version, commit: mf.commit });
        s.status = { ...s.status, version: mf.version, keyId: mf.keyId };
        // The form the disk takes: the image on SYSTEM-<target> when both have it, else in the slot's initramfs.
        // Only that form's parts are staged; the others are still read and checked.
        s.system = names.includes(DISK_FORM_PARTS.image) ? systemPartition(m, target) : undefined;
        unused = new Set(s.system ? [PARTS.initramfs] : Object.values(DISK_FORM_PARTS));
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const need = mf.parts.reduce((n, p) => n + (unused.has(p.name) ? 0 : p.size), 0);
        const fs = statfsSync(dir);
        if (fs.bavail * fs.bsize < need) {
          throw new Error(`the parts need ${(need / 1e6).toFixed(1)} MB to be staged in ${m.stagingDir}, which has `
            + `${(fs.bavail * fs.bsize / 1e6).toFixed(1)} MB free`);
        }
        const form = s.system ? `its image for ${systemLabel(target)} (${s.system.devPath})` : 'self-contained';
        o.log.info(`upgrade "${id}": ${mf.version} (${mf.commit}) signed by ${mf.keyId}; staging in ${dir}, ${form}`);
      },
      part: (p, data) => {
        if (unused.has(p.name)) return;
        const fd = openSync(join(dir, p.name), 'a', 0o600);
        try {
          for (let off = 0; off < data.length;) off += writeSync(fd, data, off);
        } finally {
          closeSync(fd);
        }
      },
    });
    session = s;
    watchIdle(s);
    await report(s, true);
    if (open) void fetchBundle(s, open);
    else if (spec.source) void fetchBundle(s, () => httpOpen(spec.source!));
    await s.received;
  };

  const watchIdle = (s: Session) => {
    clearTimeout(s.idle);
    s.idle = setTimeout(() => {
      void fail(s, `nothing received for ${UPLOAD_IDLE_MS / 1000} s after ${s.reader.received} bytes: abandoned`);
    }, o.idleMs ?? UPLOAD_IDLE_MS);
  };

  /** The slot written once: the bundle arrived whole (and, from a stream, the stream ended and checked out). */
  const startWriting = (s: Session) => {
    s.settle();
    void writeSlot(s).catch((e: Error) => fail(s, `writing slot ${s.status.slot}: ${e.message}`));
  };

  /**
   * Feeds the reader; once the archive ended, an upload's slot is written at once, a stream's when it ends (what
   * streams it may still refuse it: TUF's hash is known only at its end). Throws the reader's refusal.
   */
  const feed = async (s: Session, data: Buffer, streamed: boolean) => {
    if (s.done) {
      // After the archive's end only its zero padding may come (tar's blocks, a record size's worth).
      if (data.some((b) => b !== 0)) {
        const e = new Error(`bytes after the end of the bundle's archive (at ${s.reader.received}): refused`);
        await fail(s, e.message);
        throw e;
      }
      return;
    }
    // Not once the archive ended (above): an idle timer set then would fail, a minute later, an upgrade staged.
    watchIdle(s);
    try {
      s.reader.push(data);
    } catch (e) {
      await fail(s, (e as Error).message);
      throw e;
    }
    s.status.bytesReceived = s.reader.received;
    if (!s.reader.complete) {
      void report(s);
      return;
    }
    s.done = true;
    clearTimeout(s.idle);
    if (!streamed) startWriting(s);
  };

  const fetchBundle = async (s: Session, open: () => Promise<AsyncIterable<Buffer>>) => {
    try {
      for await (const chunk of await open()) {
        // Leaving the loop ends the source (a response is destroyed, a file closed).
        if (s.failed) return;
        await feed(s, chunk, true);
      }
      if (s.failed) return;
      if (!s.done) s.reader.finish();
      startWriting(s);
    } catch (e) {
      await fail(s, (e as Error).message);
    }
  };

  const writeSlot = async (s: Session) => {
    if (s.failed) return;
    const m = o.machine as UpgradeMachine;
    const mf: UpgradeManifest = s.reader.finish();
    const target = s.status.slot as 'A' | 'B';
    const dir = join(m.stagingDir, s.id);
    s.status.phase = 'writing';
    o.log.info(`upgrade "${s.id}": writing ${mf.version} to slot ${target}`);
    await report(s, true);
    const tries = s.spec.tries || DEFAULT_TRIES;
    const before = m.boot.loader();
    const healthTimeoutSeconds = s.spec.healthTimeoutSeconds || DEFAULT_HEALTH_TIMEOUT_SECONDS;
    // Refused before anything is touched: the slot, its SYSTEM partition and the loader stay as they were.
    const misfit = s.system && (imageFitProblem(join(dir, DISK_FORM_PARTS.image), s.system, systemLabel(target))
      ?? busyProblem(s.system, systemLabel(target)));
    if (misfit) throw new Error(misfit);
    const extras = payloadOf(mf, dir);
    // The record first: a machine stopped from here on finds, at its next start, which upgrade it was writing.
    m.boot.setRecord({ id: s.id, status: s.status, healthTimeoutSeconds });
    // Not good from here on: a slot being rewritten can be neither rolled back to nor booted.
    m.boot.setLoader({ ...before, good: new Set([...before.good].filter((x) => x !== target)) });
    m.boot.clearSlot(target);
    await o.slotsChanged();
    // The slot's image first, then the slot that boots it: a slot is whole only with slot.env, written last.
    if (s.system) await writeSystemImage(s, mf, join(dir, DISK_FORM_PARTS.image), s.system, m.systemDisk!);
    await m.boot.fillSlot(target, {
      kernel: join(dir, PARTS.kernel), initramfs: join(dir, s.system ? DISK_FORM_PARTS.initramfs : PARTS.initramfs),
      extras: extras.map((name) => ({ name, path: join(dir, name) })),
    },
      { cmdline: mf.cmdline, version: mf.version, commit: mf.commit },
      (n) => {
        s.status.bytesWritten += n;
        void report(s);
        testPause('upgrade-slot-write', s.id);
      });
    rmSync(dir, { recursive: true, force: true });
    s.status.phase = 'staged';
    m.boot.setRecord({ id: s.id, status: s.status, healthTimeoutSeconds });
    m.boot.setLoader(trySlot(m.boot.loader(), target, Math.min(tries, MAX_TRIES)));
    session = undefined;
    await report(s, true);
    await o.slotsChanged();
    o.log.info(`upgrade "${s.id}": ${mf.version} written to slot ${target} (${s.status.bytesWritten} bytes); `
      + `the loader tries it ${tries} time(s) at the next boot`);
    if (s.spec.reboot) m.reboot(`upgrade "${s.id}" to ${mf.version} in slot ${target}`);
  };

  /**
   * Writes the staged image to the target slot's SYSTEM partition (opened O_EXCL: the kernel refuses one that is
   * mounted, as the running slot's is) with its head last, then reads it back: what stage0 will read is what was
   * checked.
   */
  const writeSystemImage = async (s: Session, mf: UpgradeManifest, staged: string, to: SystemPartition,
    disk: SystemDisk) => {
    const part = mf.parts.find((p) => p.name === DISK_FORM_PARTS.image)!;
    const dropCache = () => disk.flushBuffers(to.devPath);
    const base = s.status.bytesWritten;
    let paused = 0;
    const progress = (n: number) => {
      s.status.bytesWritten = base + n;
      void report(s);
      if (n - paused < PAUSE_AFTER) return;
      paused = n;
      testPause('upgrade-system-write', s.id);
    };
    o.log.info(`upgrade "${s.id}": writing its system image to ${to.devPath}`);
    const written = await writeImage({
      compressed: Readable.from(readLater(staged)), target: to.devPath, targetBytes: to.sizeBytes, progress, dropCache,
      image: { compression: 'zstd', compressedSize: part.size, compressedSha256: part.sha256 },
      source: `the staged ${DISK_FORM_PARTS.image}`,
    }).catch((e: Error) => {
      // Mounted since busyProblem looked: the kernel refuses O_EXCL on a mounted device.
      if (!isErrno(e.cause, 'EBUSY')) throw e;
      throw new Error(inUse(to, systemLabel(s.status.slot as Slot)), { cause: e });
    });
    await verifyImage({ target: to.devPath, ...written, dropCache, progress: () => {} });
    o.log.info(`upgrade "${s.id}": ${to.devPath} holds the image (${(written.size / 1e6).toFixed(1)} MB), read back`);
  };

  const rollback = async (id: string, spec: RollbackRequestSpec) => {
    const s: Session = {
      id, spec: { reboot: spec.reboot, tries: 0, healthTimeoutSeconds: 0, allowDowngrade: false },
      status: blank('rollback'),
      done: true, reader: new BundleReader([]), writer: writerOf(id), ...receiving(),
    };
    if (!('boot' in o.machine)) {
      await fail(s, o.machine.refuse);
      return;
    }
    const m = o.machine;
    const to = otherSlot(m.boot.running);
    s.status.slot = to;
    s.status.version = m.boot.slot(to)?.version ?? '';
    if (!s.status.version) {
      await fail(s, `slot ${to} holds no system: there is nothing to roll back to`);
      return;
    }
    try {
      m.boot.setLoader(rollBack(m.boot.loader(), m.boot.running));
    } catch (e) {
      await fail(s, (e as Error).message);
      return;
    }
    s.status = { ...s.status, phase: 'done', finishedAt: now() };
    await report(s, true);
    await o.slotsChanged();
    o.log.info(`rollback "${id}": slot ${to} (${s.status.version}) is the default`);
    if (spec.reboot) m.reboot(`rollback "${id}" to slot ${to}`);
  };

  const status = { namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE };
  // Not one at a time in the controller's sense: an upgrade refuses another in its own words (the session).
  const controllers = [
    requestController<UpgradeRequestSpec, UpgradeStatusSpec>({
      name: 'upgrade-requests', owner: o.owner, oneAtATime: false, status,
      request: { namespace: CONFIG_NS, type: UPGRADE_REQUEST_TYPE },
      // Handled until the bundle arrived whole (or the upgrade failed): until then it can be withdrawn.
      handle: begin,
      // The client gave up (cosictl deletes its request when its upload fails): so does the machine.
      withdrawn: (id) => {
        const s = session;
        if (s?.id === id && !s.done) void fail(s, 'the UpgradeRequest was deleted before its bundle arrived whole');
      },
    }),
    requestController<RollbackRequestSpec, UpgradeStatusSpec>({
      name: 'rollback-requests', owner: o.owner, oneAtATime: false, status,
      request: { namespace: CONFIG_NS, type: ROLLBACK_REQUEST_TYPE }, handle: rollback,
    }),
  ];

  return {
    async upload(id, offset, data) {
      const s = session?.id === id ? session : undefined;
      if (!s) {
        throw new StateError('failed-precondition', `no upgrade "${id}" is receiving a bundle (create an `
          + 'UpgradeRequest with an empty source first; see its UpgradeStatus)', id);
      }
      if (s.spec.source) throw new StateError('failed-precondition', `upgrade "${id}" fetches ${s.spec.source}`, id);
      if (s.done) return { received: s.reader.received, complete: true };
      if (offset !== s.reader.received) {
        throw new StateError('failed-precondition', `offset ${offset}: the machine holds ${s.reader.received} bytes `
          + `of upgrade "${id}"; send from there`, id);
      }
      try {
        await feed(s, data, false);
      } catch (e) {
        throw new StateError('failed-precondition', `upgrade "${id}": ${(e as Error).message}`, id, { cause: e });
      }
      return { received: s.reader.received, complete: s.done };
    },
    upgradeFrom: (id, spec, open, expect) => begin(id, spec, open, expect),
    runningVersion,
    controllers,
    close() {
      clearTimeout(session?.idle);
    },
  };
}
