// uevent: kernel object events (NETLINK_KOBJECT_UEVENT): a device or module appearing
// or going. Plugins use them to react without polling sysfs or /proc.
import type { Native } from '../../native/index.ts';

const NETLINK_KOBJECT_UEVENT = 15;
const KERNEL_GROUP = 1; // udev's rebroadcasts use group 2; we listen to the kernel itself

/** A kernel uevent datagram ("ACTION@DEVPATH\0KEY=VALUE\0..."), or null for udev's own format. */
export function parseUevent(b: Buffer): Record<string, string> | null {
  const parts = b.toString('utf8').split('\0').filter(Boolean);
  if (!parts[0]?.includes('@') || parts[0].startsWith('libudev')) return null;
  return Object.fromEntries(parts.slice(1).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

/** Calls onEvent for each kernel uevent of `subsystem` (or of any of several); returns stop(). */
export function subscribeUevents(
  n: Native, subsystem: string | readonly string[], onEvent: (event: Record<string, string>) => void,
): () => void {
  const wanted = new Set(typeof subsystem === 'string' ? [subsystem] : subsystem);
  const fd = n.netlinkOpen(NETLINK_KOBJECT_UEVENT, [KERNEL_GROUP]);
  const stop = n.subscribeDatagrams(fd, (d) => {
    const event = parseUevent(d);
    if (event?.SUBSYSTEM !== undefined && wanted.has(event.SUBSYSTEM)) onEvent(event);
  });
  return () => {
    stop();
    n.closeFd(fd);
  };
}
