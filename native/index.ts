// native: the typed face of appliance_native.node (see native/src). Loaded with
// process.dlopen because a single executable's `require` only knows built-ins.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export interface ChildExit { pid: number; code: number | null; signal: number | null }
export type RebootCommand = 'restart' | 'halt' | 'poweroff' | 'cad_on' | 'cad_off';

/** Errors thrown by the addon carry errno's name in `code`, like Node's fs errors. */
export interface NativeError extends Error { code: string; errno: number; syscall: string }

export interface Native {
  mount(source: string, target: string, fstype: string, flags: number, data?: string): void;
  umount2(target: string, flags?: number): void;
  sync(): void;
  /**
   * mount, umount2 and sync on the thread pool, for PID 1 while it serves the API: a disk can keep them for
   * seconds, and its own thread answers meanwhile. Rejected with the NativeError the sync ones throw.
   */
  mountAsync(source: string, target: string, fstype: string, flags: number, data?: string): Promise<void>;
  umount2Async(target: string, flags?: number): Promise<void>;
  syncAsync(): Promise<void>;
  /** Syncs first for restart/halt/poweroff. Returns only on failure (throws) or for cad_*. */
  reboot(cmd: RebootCommand): void;
  sethostname(name: string): void;
  setdomainname(name: string): void;
  /** waitpid(pid, WNOHANG): null while the child still runs. Never accepts -1. */
  waitpid(pid: number): ChildExit | null;
  setChildSubreaper(): void;
  /** SO_PEERCRED of a connected unix socket. */
  peerCred(fd: number): { pid: number; uid: number; gid: number };
  /** A netlink socket of `protocol` (0 = NETLINK_ROUTE), joined to multicast `groups`. */
  netlinkOpen(protocol: number, groups?: number[]): number;
  /** Sends one request; returns every datagram of the answer (dump until DONE, else the ack). */
  netlinkRequest(fd: number, request: Buffer, timeoutMs: number): Buffer[];
  /** Delivers each datagram received on `fd` (netlink, AF_PACKET; a thread reads it); returns stop(). */
  subscribeDatagrams(fd: number, onMessage: (datagram: Buffer) => void): () => void;
  closeFd(fd: number): void;
  /** An AF_PACKET datagram socket for IPv4 on one link (DHCP before an address exists). */
  packetOpen(ifindex: number): number;
  /** Sends an IPv4 packet to the link's broadcast address. */
  packetSend(fd: number, ifindex: number, ipPacket: Buffer): void;
  /** The calling (main) thread enters a new network namespace. */
  unshareNet(): void;
  /** The calling (main) thread gets a mount namespace of its own: propagation private, or slave (mounts come in). */
  unshareMounts(slave?: boolean): void;
  /** Tells the kernel partition `number` of `disk` now spans these bytes (BLKPG_RESIZE_PARTITION). */
  resizePartition(disk: string, number: number, startBytes: number, lengthBytes: number): void;
  /** Has the kernel read `disk`'s partition table again (BLKRRPART; thread pool): EBUSY while a partition is in use. */
  rereadPartitions(disk: string): Promise<void>;
  /** Writes `disk`'s dirty buffers and drops its cached pages, its own only (BLKFLSBUF; thread pool). */
  flushBuffers(disk: string): Promise<void>;
  /**
   * A free loop device made a read-only view of `file` (LOOP_CONFIGURE): its path (/dev/loopN) and an open
   * descriptor. Autoclear: the device is detached at its last close, so keep `fd` open until the device is
   * mounted (the mount then holds it), and close it (closeFd) after, whether the mount worked or not.
   */
  attachLoop(file: string): { device: string; fd: number };
  /** Grows the ext4 mounted at `mountPoint` to `blocks` filesystem blocks, online (EXT4_IOC_RESIZE_FS). */
  growExt4(mountPoint: string, blocks: number): void;
  /** The project id of the file at `path` (FS_IOC_FSGETXATTR; 0: none). */
  projectOf(path: string): number;
  /** Gives the directory `path` project `id`, inherited by what is made in it from now on (FS_IOC_FSSETXATTR). */
  setProject(path: string, id: number): void;
  /** The hard limit on project `id`'s bytes on the filesystem holding `path`, in whole KiB; 0: none (quotactl_fd). */
  setProjectLimit(path: string, id: number, bytes: number): void;
  /** Project `id`'s bytes used and its hard limit (0: none) on the filesystem holding `path` (quotactl_fd). */
  projectUsage(path: string, id: number): { usedBytes: number; limitBytes: number };
  /** A descriptor of the calling thread's mount namespace (close it with closeFd). */
  mountNamespaceFd(): number;
  /** The calling thread enters the mount namespace of `fd` (setns). */
  setMountNamespace(fd: number): void;
  /** The calling (main) thread gets a private hostname (UTS namespace). */
  unshareUts(): void;
  /** no_new_privs, then keep only these capabilities (numbers, see capabilities(7)). */
  dropCapabilities(keep: number[]): void;
  /**
   * no_new_privs and the bounding set cut to `keep`; then uid/gid (not 0) with no supplementary groups, `keep`
   * held and raised as ambient capabilities: a program executed next holds exactly `keep`.
   */
  becomeUser(uid: number, gid: number, keep: number[]): void;
  /** seccomp(2) filter mode on every thread (TSYNC): a BPF program of 8-byte sock_filter instructions. */
  seccompFilter(program: Buffer): void;
  /**
   * execve(file, argv, env) ("NAME=value" strings), or with the environment as it is when `env` is not given
   * (returns only on failure). /proc/self/exe is this executable again.
   */
  execProgram(file: string, argv: string[], env?: string[]): void;
  /**
   * The mount `dir` becomes the calling thread's root: pivot_root and the old root detached, or, where the
   * root is the initramfs (which cannot be pivoted), moved onto / and chroot'ed into. Call it in a mount
   * namespace of its own with private propagation, then exec (other threads keep the old root).
   */
  enterRoot(dir: string): 'pivot' | 'move';
  /** finit_module(2) of an uncompressed .ko; params like "numdummies=2". */
  finitModule(path: string, params?: string): void;
  /** delete_module(2) with O_NONBLOCK: EWOULDBLOCK/EBUSY while the module is in use. */
  deleteModule(name: string): void;
  /** clock_gettime(CLOCK_REALTIME) in ms, sub-millisecond fraction kept. */
  clockNow(): number;
  /** clock_settime(CLOCK_REALTIME). */
  clockStep(epochMs: number): void;
  /** adjtime(2): slews the clock by deltaMs without a jump. */
  clockSlew(deltaMs: number): void;
  /** RTC_RD_TIME on an RTC device (e.g. /dev/rtc0): epoch seconds, UTC. */
  rtcRead(device: string): number;
  /** RTC_SET_TIME: writes epoch seconds (UTC) to the RTC. */
  rtcWrite(device: string, epochSeconds: number): void;
}

/** Capability numbers (linux/capability.h) the plugins declare by name. */
export const CAPABILITY = {
  CAP_CHOWN: 0, CAP_DAC_OVERRIDE: 1, CAP_KILL: 5, CAP_NET_BIND_SERVICE: 10, CAP_NET_BROADCAST: 11, CAP_NET_ADMIN: 12,
  CAP_NET_RAW: 13, CAP_SYS_MODULE: 16, CAP_SYS_CHROOT: 18, CAP_SYS_PTRACE: 19, CAP_SYS_ADMIN: 21, CAP_SYS_BOOT: 22,
  CAP_SYS_RESOURCE: 24, CAP_SYS_TIME: 25,
} as const;
export type CapabilityName = keyof typeof CAPABILITY;

export const ADDON_FILE = 'appliance_native.node';

/** Where the addon may be: an explicit override, beside the executable (the image's
 * layout: /init and /lib/appliance_native.node), or the cmake-js build in the repo. */
export function addonCandidates(): string[] {
  const exeDir = dirname(process.execPath);
  return [
    process.env.APPLIANCE_NATIVE,
    join(exeDir, 'lib', ADDON_FILE),
    join(exeDir, ADDON_FILE),
    resolve('native', 'build', 'Release', ADDON_FILE),
  ].filter((p): p is string => !!p);
}

let loaded: Native | undefined;

export function native(): Native {
  if (loaded) return loaded;
  const candidates = addonCandidates();
  const path = candidates.find((p) => existsSync(p));
  if (!path) throw new Error(
    `native addon ${ADDON_FILE} not found; looked in: ${candidates.join(', ')}`
      + ' (set APPLIANCE_NATIVE or run `npm run build`)',
  );
  const mod = { exports: {} as Native };
  process.dlopen(mod, path);
  loaded = mod.exports;
  return loaded;
}
