// labels: the names the disk image gives its partitions and filesystems, and where the
// machine mounts them: one list for the image build, PID 1 and the storage plugin.
/** GPT partition name and filesystem label of the persisted machine config. */
export const STATE_LABEL = 'STATE';
export const STATE_MOUNT = '/system/state';
/** GPT partition name and filesystem label of the machine's data, grown to its disk at first boot. */
export const EPHEMERAL_LABEL = 'EPHEMERAL';
export const EPHEMERAL_MOUNT = '/var';
