// boot-slots: the two systems an installed disk holds, A and B, as directories on its ESP, and
// what the boot loader's environment block (grubenv.ts) says about them. One description for the
// image build (which fills slot A), GRUB's config (which reads it), and the running system (which
// writes a new slot, marks a tried one good, or rolls back):
//   /A/vmlinuz, /A/initramfs.cpio.zst, /A/slot.env   (slot.env: the slot's command line and version)
//   /boot/grub/grubenv   default_slot, try_slot, tries_left (GRUB counts these down), tried_slot (GRUB
//                        sets it when the tries ran out), good_slots (ours: slots that came up healthy)
import { decodeGrubEnv, encodeGrubEnv } from './grubenv.ts';

export const SLOTS = ['A', 'B'] as const;
export type Slot = (typeof SLOTS)[number];
/** On the kernel command line GRUB writes: the slot it booted. */
export const SLOT_PARAM = 'appliance.slot';
/** The ESP's GPT partition name and FAT label. */
export const ESP_LABEL = 'EFI';
export const GRUBENV_PATH = 'boot/grub/grubenv';
export const SLOT_FILES = { kernel: 'vmlinuz', initramfs: 'initramfs.cpio.zst', env: 'slot.env' } as const;
/**
 * What an upgrade bundle carries for a disk whose slots read their image from a SYSTEM partition (both or neither):
 * the initramfs that finds the image (it becomes the slot's initramfs), and the image zstd'd (written, decompressed,
 * to the slot's SYSTEM partition). Beside them the self-contained initramfs, for disks without SYSTEM partitions.
 */
export const DISK_FORM_PARTS = { initramfs: 'initramfs-disk.cpio.zst', image: 'system.squashfs.zst' } as const;
/** The most boots a slot can be tried for: grub.cfg counts down from at most this. */
export const MAX_TRIES = 3;

export const isSlot = (s: string | undefined): s is Slot => s === 'A' || s === 'B';
export const otherSlot = (s: Slot): Slot => (s === 'A' ? 'B' : 'A');

/** What the loader's environment says about the slots. */
export interface LoaderState {
  defaultSlot: Slot;
  /** The slot being tried, while it has tries left. */
  trySlot?: Slot;
  triesLeft: number;
  /** The slot whose tries ran out (set by GRUB), until the running system clears it. */
  triedSlot?: Slot;
  good: ReadonlySet<Slot>;
}

const slotOr = (v: string | undefined): Slot | undefined => (isSlot(v) ? v : undefined);

/** The loader state in an environment block (a block without our variables is a fresh disk: A, good). */
export function loaderState(block: Uint8Array): LoaderState {
  const env = decodeGrubEnv(block);
  const defaultSlot = slotOr(env.get('default_slot')) ?? 'A';
  const tries = Number(env.get('tries_left') ?? 0);
  const good = new Set((env.get('good_slots') ?? defaultSlot).split(',').filter(isSlot));
  const trySlot = slotOr(env.get('try_slot'));
  const triedSlot = slotOr(env.get('tried_slot'));
  return {
    defaultSlot, triesLeft: Number.isInteger(tries) && tries > 0 ? tries : 0, good,
    ...(trySlot ? { trySlot } : {}), ...(triedSlot ? { triedSlot } : {}),
  };
}

/** The environment block for `s`, keeping the variables of `block` that are not ours. */
export function encodeLoaderState(s: LoaderState, block?: Uint8Array): Buffer {
  const env = block ? decodeGrubEnv(block) : new Map<string, string>();
  for (const k of ['default_slot', 'try_slot', 'tries_left', 'tried_slot', 'good_slots']) env.delete(k);
  env.set('default_slot', s.defaultSlot);
  if (s.trySlot) {
    env.set('try_slot', s.trySlot);
    env.set('tries_left', String(s.triesLeft));
  }
  if (s.triedSlot) env.set('tried_slot', s.triedSlot);
  env.set('good_slots', SLOTS.filter((x) => s.good.has(x)).join(','));
  return encodeGrubEnv(env);
}

/** A slot just written: tried at the next boots, not good until it says so. */
export function trySlot(s: LoaderState, slot: Slot, tries: number): LoaderState {
  if (slot === s.defaultSlot) throw new Error(`slot ${slot} is the default: a new system goes to the other slot`);
  if (!Number.isInteger(tries) || tries < 1 || tries > MAX_TRIES) {
    throw new Error(`tries: ${tries}; a slot is tried 1 to ${MAX_TRIES} times`);
  }
  const good = new Set(s.good);
  good.delete(slot);
  return { defaultSlot: s.defaultSlot, trySlot: slot, triesLeft: tries, good };
}

/** The slot came up healthy: it is the default from now on. */
export function markGood(s: LoaderState, slot: Slot): LoaderState {
  return { defaultSlot: slot, triesLeft: 0, good: new Set([...s.good, slot]) };
}

/** A failed try, reported: forget it (the slot stays not good). */
export function forgetTried(s: LoaderState): LoaderState {
  const { triedSlot: _tried, ...rest } = s;
  return rest;
}

/** The other slot, when it was good, becomes the default (and any try is called off). */
export function rollBack(s: LoaderState, running: Slot): LoaderState {
  const to = otherSlot(running);
  if (!s.good.has(to)) throw new Error(`slot ${to} never came up healthy: there is nothing to roll back to`);
  return { defaultSlot: to, triesLeft: 0, good: s.good };
}

/** What a slot's slot.env holds: the command line GRUB boots it with, and its version. */
export interface SlotInfo { cmdline: string; version: string; commit: string }

/**
 * GRUB reads `cmdline` from slot.env with load_env and splits it into words; what would change its
 * meaning there (quotes, a backslash, a dollar sign) is refused.
 */
export function encodeSlotEnv(i: SlotInfo): Buffer {
  const bad = /["'\\$\n;{}]/.exec(i.cmdline);
  if (bad) throw new Error(`command line ${JSON.stringify(i.cmdline)}: ${JSON.stringify(bad[0])} is not allowed`);
  return encodeGrubEnv({ cmdline: i.cmdline, version: i.version, commit: i.commit });
}

export function decodeSlotEnv(block: Uint8Array): SlotInfo {
  const env = decodeGrubEnv(block);
  return { cmdline: env.get('cmdline') ?? '', version: env.get('version') ?? '', commit: env.get('commit') ?? '' };
}
