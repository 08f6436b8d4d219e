// mount-table: mount(2) flags and /proc/self/mounts, shared by PID 1 (early mounts,
// unmount-all) and the storage plugin.

export const MS = {
  RDONLY: 1, NOSUID: 2, NODEV: 4, NOEXEC: 8, SYNCHRONOUS: 16, REMOUNT: 32, NOATIME: 1024, BIND: 4096, REC: 16384,
  SHARED: 1 << 20, RELATIME: 1 << 21,
} as const;
export const MNT_DETACH = 2;

export interface ProcMount { source: string; target: string; fstype: string; options: string }

/** Parses /proc/self/mounts (octal escapes such as \040 for spaces decoded). */
export function parseMounts(text: string): ProcMount[] {
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return text.split('\n').filter(Boolean).map((line) => {
    const [source = '', target = '', fstype = '', options = ''] = line.split(' ');
    return { source: unescape(source), target: unescape(target), fstype, options };
  });
}
