// boot-partition: the running system's view of the mounted ESP (machinery/disk/boot-slots.ts says what is
// on it): the loader's environment, each slot's files, and the record of the last upgrade. Writes are
// ordered so that a power cut at any point leaves the default slot booting: a slot's files are written
// and synced before the loader is told to try it, and slot.env (which says the slot is whole) comes last.
import {
  closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync,
  writeSync,
} from 'node:fs';
import { copyFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  decodeSlotEnv, encodeLoaderState, encodeSlotEnv, GRUBENV_PATH, loaderState, SLOT_FILES, type LoaderState,
  type Slot, type SlotInfo,
} from '../../machinery/disk/boot-slots.ts';
import { GrubEnvError, GRUBENV_SIZE } from '../../machinery/disk/grubenv.ts';
import { decodePayload, PAYLOAD_INDEX, payloadFiles } from '../../machinery/disk/slot-payload.ts';
import { syncDirectory, writeFileAtomic } from '../../machinery/sys/atomic-write.ts';
import type { UpgradeStatusSpec } from '../../proto/gen/spec-types.ts';

/** The last upgrade, kept beside the slots so that whichever system boots next can report it. */
export interface UpgradeRecord {
  id: string;
  status: UpgradeStatusSpec;
  healthTimeoutSeconds: number;
  /** Set by the tried system when its health checks did not pass in time: what failed. */
  trialProblem?: string;
}

const RECORD = 'upgrade.json';

export class BootPartition {
  constructor(readonly dir: string, readonly running: Slot) {}

  /**
   * What the loader acts on. A block GRUB cannot read (garbage, a wrong size) it ignores, booting default_slot=A as
   * grub.cfg sets it before load_env: so does this, and loaderProblem() says why.
   */
  loader(): LoaderState { return this.readLoader().state; }

  /** Why the environment block cannot be read (what GRUB boots then), or undefined when it can. */
  loaderProblem(): string | undefined { return this.readLoader().problem; }

  private readLoader(): { state: LoaderState; problem?: string } {
    const file = join(this.dir, GRUBENV_PATH);
    try {
      return { state: loaderState(readFileSync(file)) };
    } catch (e) {
      if (!(e instanceof GrubEnvError)) throw e;
      return {
        state: { defaultSlot: 'A', triesLeft: 0, good: new Set(['A']) },
        problem: `the boot loader's environment ${file} is unreadable (${e.message}): GRUB ignores it and boots `
          + 'slot A; the next change of the slots (marking one good, an upgrade) writes it anew',
      };
    }
  }

  /**
   * Rewrites the environment block in place, as GRUB's save_env does: the file keeps its size and its
   * clusters, so the loader finds its block where it left it.
   */
  setLoader(s: LoaderState): void {
    const file = join(this.dir, GRUBENV_PATH);
    // A block GRUB cannot read keeps no variables worth keeping: a fresh one replaces it.
    const block = encodeLoaderState(s, this.loaderProblem() ? undefined : readFileSync(file));
    if (block.length !== GRUBENV_SIZE) throw new Error(`${file}: a block of ${block.length} bytes`);
    const fd = openSync(file, 'r+');
    try {
      writeSync(fd, block, 0, block.length, 0);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** What a slot holds, or undefined when it is not whole (no slot.env, or a part or a payload file missing). */
  slot(slot: Slot): SlotInfo | undefined {
    const dir = join(this.dir, slot);
    if (!existsSync(join(dir, SLOT_FILES.env))) return undefined;
    if (![SLOT_FILES.kernel, SLOT_FILES.initramfs].every((f) => existsSync(join(dir, f)))) return undefined;
    if (existsSync(join(dir, PAYLOAD_INDEX))) {
      const index = decodePayload(readFileSync(join(dir, PAYLOAD_INDEX)), join(dir, PAYLOAD_INDEX));
      if (index instanceof Error || !payloadFiles(index).every((f) => existsSync(join(dir, f)))) return undefined;
    }
    return decodeSlotEnv(readFileSync(join(dir, SLOT_FILES.env)));
  }

  /** The directory of a slot: what it holds, the appliance's payload among it. */
  slotDir(slot: Slot): string { return join(this.dir, slot); }

  /** Empties a slot, slot.env first: from then on the slot is not whole. */
  clearSlot(slot: Slot): void {
    const dir = join(this.dir, slot);
    mkdirSync(dir, { recursive: true });
    rmSync(join(dir, SLOT_FILES.env), { force: true });
    syncDirectory(dir);
    for (const f of readdirSync(dir)) rmSync(join(dir, f), { force: true, recursive: true });
    syncDirectory(dir);
  }

  /**
   * Copies the parts (already checked) into an empty slot, each synced, then its slot.env. The copies and syncs run
   * off the event loop: tens of megabytes to a FAT partition take seconds (over 10 on a loaded TCG host), during
   * which the API must still answer (a client's keepalive gave up on a machine that stopped answering).
   */
  async fillSlot(
    slot: Slot, parts: { kernel: string; initramfs: string; extras?: readonly { name: string; path: string }[] },
    info: SlotInfo, onBytes: (n: number) => void,
  ): Promise<void> {
    const dir = join(this.dir, slot);
    const files = [[SLOT_FILES.kernel, parts.kernel], [SLOT_FILES.initramfs, parts.initramfs],
      ...(parts.extras ?? []).map((e) => [e.name, e.path] as const)] as const;
    for (const [name, from] of files) {
      const to = join(dir, name);
      await copyFile(from, to);
      const file = await open(to, 'r+');
      try {
        await file.sync();
      } finally {
        await file.close();
      }
      onBytes(statSync(to).size);
    }
    syncDirectory(dir);
    writeFileAtomic(join(dir, SLOT_FILES.env), encodeSlotEnv(info), 0o644);
  }

  record(): UpgradeRecord | undefined {
    const r = this.readRecord();
    if (r.problem) throw new Error(r.problem);
    return r.record;
  }

  /** The upgrade record, or why it cannot be read: what reports the slots reads it so, and boots on. */
  readRecord(): { record?: UpgradeRecord; problem?: string } {
    const file = join(this.dir, RECORD);
    if (!existsSync(file)) return {};
    try {
      return { record: JSON.parse(readFileSync(file, 'utf8')) as UpgradeRecord };
    } catch (e) {
      return { problem: `${file}: not an upgrade record (${(e as Error).message})` };
    }
  }

  setRecord(r: UpgradeRecord): void { writeFileAtomic(join(this.dir, RECORD), JSON.stringify(r, null, 2) + '\n'); }
}
