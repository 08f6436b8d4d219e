// cpio: the "newc" (SVR4, no CRC) archive format the kernel unpacks as initramfs.
// Writer and reader. The writer is deterministic: it assigns inode numbers in
// entry order and takes mtime/uid/gid from the entry (callers pass fixed values).
//
// Layout per entry: 110-byte ASCII header ("070701" + 13 fields of 8 hex digits),
// the NUL-terminated name, padding to 4 bytes, the data, padding to 4 bytes.
// The archive ends with an entry named "TRAILER!!!".

export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;
export const S_IFCHR = 0o020000;
export const S_IFBLK = 0o060000;

export type CpioEntry =
  | { type: 'file'; path: string; mode: number; data: Uint8Array; mtime?: number; uid?: number; gid?: number }
  | { type: 'dir'; path: string; mode: number; mtime?: number; uid?: number; gid?: number }
  | { type: 'symlink'; path: string; target: string; mtime?: number; uid?: number; gid?: number }
  | {
    type: 'chardev' | 'blockdev'; path: string; mode: number; major: number; minor: number;
    mtime?: number; uid?: number; gid?: number;
  };

const MAGIC = '070701';
const TRAILER = 'TRAILER!!!';

export class CpioError extends Error {
  constructor(message: string, readonly input: string) {
    super(message);
    this.name = 'CpioError';
  }
}

const pad4 = (n: number) => (4 - (n % 4)) % 4;

function hex8(n: number, field: string, path: string): string {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new CpioError(
    `${field} ${n} does not fit a newc header field`, path,
  );
  return n.toString(16).padStart(8, '0');
}

/** Archive paths are relative ("init", "dev/console"), as the kernel expects. */
export function normalizePath(p: string): string {
  const s = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (s === '' || s.split('/').some((part) => part === '..' || part === '')) throw new CpioError(
    `bad archive path "${p}"`, p,
  );
  return s;
}

function header(e: CpioEntry, ino: number, name: string, size: number): Buffer {
  const modeType = e.type === 'file' ? S_IFREG : e.type === 'dir' ? S_IFDIR : e.type === 'symlink' ? S_IFLNK
    : e.type === 'chardev' ? S_IFCHR : S_IFBLK;
  const perm = e.type === 'symlink' ? 0o777 : e.mode & 0o7777;
  const dev = e.type === 'chardev' || e.type === 'blockdev' ? [e.major, e.minor] : [0, 0];
  const fields = [
    ino, modeType | perm, e.uid ?? 0, e.gid ?? 0, e.type === 'dir' ? 2 : 1, e.mtime ?? 0, size,
    0, 0, dev[0]!, dev[1]!, Buffer.byteLength(name) + 1, 0,
  ];
  const names = [
    'ino', 'mode', 'uid', 'gid', 'nlink', 'mtime', 'filesize',
    'devmajor', 'devminor', 'rdevmajor', 'rdevminor', 'namesize', 'check',
  ];
  return Buffer.from(MAGIC + fields.map((f, i) => hex8(f, names[i]!, name)).join(''), 'ascii');
}

function record(parts: Buffer[], h: Buffer, name: string, data: Uint8Array): void {
  const nameBuf = Buffer.from(name + '\0');
  parts.push(h, nameBuf, Buffer.alloc(pad4(h.length + nameBuf.length)));
  if (data.length) parts.push(Buffer.from(data.buffer, data.byteOffset, data.length), Buffer.alloc(pad4(data.length)));
}

/**
 * Encodes entries in the order given, after checking that no path repeats and that
 * every parent directory comes before its children. Use `sortEntries` for a
 * deterministic order.
 */
export function* encodeCpio(entries: readonly CpioEntry[]): Generator<Buffer> {
  const seen = new Set<string>();
  let ino = 1;
  for (const e of entries) {
    const name = normalizePath(e.path);
    if (seen.has(name)) throw new CpioError(`duplicate archive path "${name}"`, e.path);
    const parent = name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : null;
    if (parent !== null && !seen.has(parent)) throw new CpioError(
      `"${name}" comes before its directory "${parent}"`, e.path,
    );
    seen.add(name);
    const data = e.type === 'file' ? e.data : e.type === 'symlink' ? Buffer.from(e.target) : new Uint8Array(0);
    const parts: Buffer[] = [];
    record(parts, header(e, ino++, name, data.length), name, data);
    yield Buffer.concat(parts);
  }
  const parts: Buffer[] = [];
  const trailer = header({ type: 'file', path: TRAILER, mode: 0, data: new Uint8Array(0) }, 0, TRAILER, 0);
  record(parts, trailer, TRAILER, new Uint8Array(0));
  yield Buffer.concat(parts);
}

export function encodeCpioBuffer(entries: readonly CpioEntry[]): Buffer {
  return Buffer.concat([...encodeCpio(entries)]);
}

/** Byte-wise path order: parents sort before children, and the order never depends on locale. */
export function sortEntries<T extends { path: string }>(entries: readonly T[]): T[] {
  return [...entries].sort(
    (a, b) => Buffer.compare(Buffer.from(normalizePath(a.path)), Buffer.from(normalizePath(b.path))),
  );
}

export interface DecodedEntry {
  path: string; mode: number; type: CpioEntry['type']; uid: number; gid: number; mtime: number; size: number;
  data: Buffer; rdevMajor: number; rdevMinor: number;
}

/** Decodes a whole newc archive (several concatenated archives are read as one). */
export function decodeCpio(buf: Buffer): DecodedEntry[] {
  const out: DecodedEntry[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < 110) {
      if (buf.subarray(off).every((b) => b === 0)) break; // zero padding after a trailer
      throw new CpioError(`truncated header at offset ${off}`, `offset ${off}`);
    }
    const magic = buf.toString('ascii', off, off + 6);
    if (magic !== MAGIC) {
      if (buf[off] === 0) {
        off += 4;
        continue;
      } // padding between concatenated archives
      throw new CpioError(`bad magic "${magic}" at offset ${off} (not a newc archive)`, `offset ${off}`);
    }
    const at = off; // `off` moves on to the next entry below; fields are read from this header
    const field = (i: number) => parseInt(buf.toString('ascii', at + 6 + i * 8, at + 14 + i * 8), 16);
    const mode = field(1);
    const size = field(6);
    const namesize = field(11);
    const nameStart = off + 110;
    const path = buf.toString('utf8', nameStart, nameStart + namesize - 1);
    const dataStart = nameStart + namesize + pad4(110 + namesize);
    if (dataStart + size > buf.length) throw new CpioError(`entry "${path}" runs past the end of the archive`, path);
    off = dataStart + size + pad4(size);
    if (path === TRAILER) continue;
    const fmt = mode & S_IFMT;
    const type = fmt === S_IFDIR ? 'dir' : fmt === S_IFLNK ? 'symlink' : fmt === S_IFCHR ? 'chardev'
      : fmt === S_IFBLK ? 'blockdev' : 'file';
    out.push({
      path, mode: mode & 0o7777, type, uid: field(2), gid: field(3), mtime: field(5), size,
      data: buf.subarray(dataStart, dataStart + size), rdevMajor: field(9), rdevMinor: field(10),
    });
  }
  return out;
}
