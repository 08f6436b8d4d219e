// labels: the names the disk image gives its partitions and filesystems, and where the
// machine mounts them: one list for the image build, PID 1 and the storage plugin.
/** GPT partition name and filesystem label of the persisted machine config. */
export const STATE_LABEL = 'STATE';
export const STATE_MOUNT = '/system/state';
/** GPT partition name and filesystem label of the machine's data, grown to its disk at first boot. */
export const EPHEMERAL_LABEL = 'EPHEMERAL';
export const EPHEMERAL_MOUNT = '/var';
/**
 * GPT partition names of the system image of each boot slot: SYSTEM-A holds the raw disk's, which stage0
 * (image/stage0/stage0.c, from_disk) finds by the superblock slot A's initramfs holds, not by this name; SYSTEM-B
 * is kept empty for the other slot (upgrade bundles still carry their image in their initramfs).
 */
export const systemLabel = (slot: 'A' | 'B') => `SYSTEM-${slot}`;
/** Where the ESP of the disk the machine booted from is mounted: its boot slots (boot-slots.ts). */
export const BOOT_MOUNT = '/system/boot';
/**
 * Where stage0 (image/stage0/stage0.c, MOUNT_DIR) mounts the system image from the initramfs, read-only:
 * the executable PID 1 and every plugin run from (image/system-image.ts).
 */
export const SYSTEM_IMAGE_MOUNT = '/system/image';
/**
 * On the command line of a live system (the ISO's and the PXE script's): it leaves every disk's STATE and
 * EPHEMERAL alone, so that a disk it may install to is never in use, and its config lives in memory.
 */
export const LIVE_PARAM = 'appliance.live';
export const liveCmdline = (cmdline: string): string => `${cmdline.trim()} ${LIVE_PARAM}`.trim();
