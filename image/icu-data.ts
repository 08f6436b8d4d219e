// icu-data: ICU's common data package (format "CmnD", the icudt<N>l.dat a full-ICU Node links into
// its binary): find it in a file, read its table of items, and write a package holding fewer items.
// Layout: a data header (uint16 size, magic 0xda 0x27, UDataInfo with format "CmnD" version 1),
// then the table: uint32 count, count x (uint32 name offset, uint32 data offset), both counted from
// the table's start, the NUL-terminated names (sorted: ICU finds items by binary search), then each
// item, 16-byte aligned, in the names' order. The table gives no size for the last item.
const MAGIC = [0xda, 0x27] as const;
const FORMAT = 'CmnD';
const ALIGN = 16;
/** A Node binary has one package of a few thousand items; more is not a package. */
const MAX_ITEMS = 100_000;

export interface IcuItem {
  /** e.g. "icudt78l/en.res", "icudt78l/brkitr/word.brk". */
  name: string;
  /** From the package's start. */
  offset: number;
  /** Up to the next item; unknown for the last one. */
  size: number | undefined;
}

export interface IcuPackage {
  /** Where the package starts in the file. */
  start: number;
  headerSize: number;
  items: IcuItem[];
}

export class IcuDataError extends Error {
  override name = 'IcuDataError';
  constructor(message: string, readonly at: number) { super(`ICU data at byte ${at}: ${message}`); }
}

/** Where packages start in `bin`: a data header whose format is CmnD. */
export function findIcuPackages(bin: Buffer): number[] {
  const found: number[] = [];
  for (let i = bin.indexOf(Buffer.from(MAGIC), 2); i >= 0; i = bin.indexOf(Buffer.from(MAGIC), i + 1)) {
    const start = i - 2;
    if (bin.toString('latin1', start + 12, start + 16) === FORMAT) found.push(start);
  }
  return found;
}

export function readIcuPackage(bin: Buffer, start: number): IcuPackage {
  const headerSize = bin.readUInt16LE(start);
  if (bin[start + 2] !== MAGIC[0] || bin[start + 3] !== MAGIC[1]) throw new IcuDataError('no data header magic', start);
  if (bin.toString('latin1', start + 12, start + 16) !== FORMAT) throw new IcuDataError('not a CmnD package', start);
  if (bin[start + 8] !== 0) throw new IcuDataError('big-endian data: only little-endian is read', start);
  if (bin[start + 16] !== 1) throw new IcuDataError(`format version ${bin[start + 16]}, not 1`, start);
  const toc = start + headerSize;
  const count = bin.readUInt32LE(toc);
  if (count === 0 || count > MAX_ITEMS || toc + 4 + 8 * count > bin.length) {
    throw new IcuDataError(`a table of ${count} items does not fit`, start);
  }
  const items: IcuItem[] = [];
  for (let k = 0; k < count; k++) {
    const nameAt = toc + bin.readUInt32LE(toc + 4 + 8 * k);
    const dataAt = toc + bin.readUInt32LE(toc + 8 + 8 * k);
    const nul = bin.indexOf(0, nameAt);
    if (nul < 0 || dataAt >= bin.length) throw new IcuDataError(`item ${k} points outside the file`, start);
    items.push({ name: bin.toString('latin1', nameAt, nul), offset: dataAt - start, size: undefined });
    const prev = items[k - 1];
    if (prev) {
      if (prev.offset >= dataAt - start) throw new IcuDataError(`items ${k - 1} and ${k} are out of order`, start);
      prev.size = dataAt - start - prev.offset;
    }
  }
  return { start, headerSize, items };
}

/**
 * A package of the items of `pkg` that `keep` accepts, with its header, placed to start at `start`
 * (alignment counts from there). The last item's size is unknown, so it cannot be kept.
 */
export function encodeIcuPackage(bin: Buffer, pkg: IcuPackage, keep: (name: string) => boolean): Buffer {
  const kept = pkg.items.filter((i) => keep(i.name));
  const last = kept.at(-1);
  if (last && last.size === undefined) {
    throw new IcuDataError(`the last item, ${last.name}, has no known size: it cannot be kept`, pkg.start);
  }
  const names = Buffer.concat(kept.map((i) => Buffer.from(`${i.name}\0`, 'latin1')));
  const tableSize = 4 + 8 * kept.length;
  const toc = pkg.start + pkg.headerSize;
  const pad = (at: number) => (ALIGN - ((toc + at) % ALIGN)) % ALIGN;
  const table = Buffer.alloc(tableSize);
  table.writeUInt32LE(kept.length, 0);
  const parts: Buffer[] = [];
  let nameAt = tableSize;
  let at = tableSize + names.length;
  kept.forEach((item, k) => {
    const gap = pad(at);
    parts.push(Buffer.alloc(gap));
    at += gap;
    table.writeUInt32LE(nameAt, 4 + 8 * k);
    table.writeUInt32LE(at, 8 + 8 * k);
    nameAt += Buffer.byteLength(item.name, 'latin1') + 1;
    const from = pkg.start + item.offset;
    parts.push(bin.subarray(from, from + item.size!));
    at += item.size!;
  });
  return Buffer.concat([bin.subarray(pkg.start, toc), table, names, ...parts]);
}

export interface ShrinkResult { items: number; kept: number; bytesBefore: number; bytesAfter: number }

/**
 * Rewrites the package at `pkg.start` in place with only the items `keep` accepts, and zero-fills
 * the bytes it no longer uses (up to the old last item's start): the file keeps its size and
 * layout, so code that points at the package still finds it.
 */
export function shrinkIcuPackage(bin: Buffer, pkg: IcuPackage, keep: (name: string) => boolean): ShrinkResult {
  const smaller = encodeIcuPackage(bin, pkg, keep);
  const end = pkg.start + pkg.items.at(-1)!.offset;
  if (pkg.start + smaller.length > end) {
    throw new IcuDataError('the smaller package does not fit where the old one was', pkg.start);
  }
  smaller.copy(bin, pkg.start);
  bin.fill(0, pkg.start + smaller.length, end);
  return {
    items: pkg.items.length, kept: pkg.items.filter((i) => keep(i.name)).length,
    bytesBefore: end - pkg.start, bytesAfter: smaller.length,
  };
}
