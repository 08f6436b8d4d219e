// zstd-frame: what a zstd frame's header says of the data it holds (RFC 8878, 3.1.1): its decompressed size, when
// the compressor wrote it. The zstd tool writes it whenever it knows the input's size (a file), so an upgrade can
// tell whether an image fits its partition before it touches anything.

const MAGIC = 0xfd2fb528;
/** The most a frame header takes: magic 4, descriptor 1, window 1, dictionary id 4, content size 8. */
export const ZSTD_HEADER_MAX = 18;

export type ZstdContentSize = { size: number } | { size?: undefined; why: string };

/** The content size the frame starting at `head` declares, or why there is none to read. */
export function zstdContentSize(head: Uint8Array): ZstdContentSize {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.length < 5 || b.readUInt32LE(0) !== MAGIC) return { why: 'not a zstd frame (its magic number is not there)' };
  const descriptor = b[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  if ((descriptor >> 3) & 1) return { why: 'a zstd frame header with its reserved bit set' };
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const fcsBytes = fcsFlag === 0 ? singleSegment : [0, 2, 4, 8][fcsFlag]!;
  if (!fcsBytes) return { why: 'the zstd frame does not declare its content size (compressed from a stream?)' };
  const at = 5 + (singleSegment ? 0 : 1) + dictionaryBytes;
  if (b.length < at + fcsBytes) return { why: `a zstd frame header cut short (${b.length} bytes)` };
  const size = fcsBytes === 1 ? b[at]! : fcsBytes === 2 ? b.readUInt16LE(at) + 256 : fcsBytes === 4 ? b.readUInt32LE(at)
    : Number(b.readBigUInt64LE(at));
  return { size };
}
