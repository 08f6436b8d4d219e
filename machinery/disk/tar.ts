// tar: the POSIX tar (ustar) members we write and read: regular files, root-owned, mode 0644.
// `tar -tvf` lists what we write; we read only what we wrote (the upgrade bundle's reader).

export const TAR_BLOCK = 512;
const BLOCK = TAR_BLOCK;

export class TarError extends Error {
  constructor(message: string, readonly member?: string) { super(member ? `${member}: ${message}` : message); }
}

export interface TarMember { name: string; data: Buffer }

export const tarPadding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** One ustar header: regular file, root-owned, mode 0644, the given time. */
export function tarHeader(name: string, size: number, mtime: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new TarError('name longer than 100 bytes', name);
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 'utf8');
  h.write(octal(0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(mtime, 12), 136, 'latin1');
  h.write('        ', 148, 'latin1'); // the checksum counts itself as spaces
  h.write('0', 156, 'latin1');
  h.write('ustar\0' + '00', 257, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'latin1');
  return h;
}

/** The archive: each member's header, data and padding, then tar's two zero blocks. */
export function encodeTar(members: readonly TarMember[], mtime: number): Buffer {
  return Buffer.concat([
    ...members.flatMap((m) => [tarHeader(m.name, m.data.length, mtime), m.data, tarPadding(m.data.length)]),
    Buffer.alloc(2 * BLOCK),
  ]);
}

/** A ustar header's name and size; refuses one whose checksum is wrong (`at`: where it is, for the message). */
export function readTarHeader(h: Buffer, at: number): { name: string; size: number } {
  const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
  const stored = parseInt(h.toString('latin1', 148, 156).replace(/[\0 ]+$/, ''), 8);
  let sum = 0;
  for (let k = 0; k < BLOCK; k++) sum += k >= 148 && k < 156 ? 0x20 : h[k]!;
  if (sum !== stored) {
    throw new TarError(`tar header checksum ${stored}, computed ${sum} (not a tar archive, or damaged)`,
      name || `offset ${at}`);
  }
  const size = parseInt(h.toString('latin1', 124, 136).replace(/[\0 ]+$/, ''), 8);
  if (!Number.isSafeInteger(size) || size < 0) throw new TarError('size field unreadable', name);
  return { name, size };
}

/**
 * The members of a ustar archive, in order; refuses a header whose checksum is wrong, and an archive
 * that ends before its end-of-archive block (a download cut short at a member's end is caught too).
 */
export function parseTar(b: Buffer): TarMember[] {
  const out: TarMember[] = [];
  for (let at = 0; ;) {
    if (at + BLOCK > b.length) {
      throw new TarError(`the archive ends at byte ${b.length}, before its end-of-archive block `
        + '(truncated?)');
    }
    const h = b.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) break;
    const { name, size } = readTarHeader(h, at);
    if (at + BLOCK + size > b.length) {
      throw new TarError(`size ${size} runs past the end of the file (truncated?)`, name);
    }
    out.push({ name, data: b.subarray(at + BLOCK, at + BLOCK + size) });
    at += BLOCK + size + tarPadding(size).length;
  }
  return out;
}
