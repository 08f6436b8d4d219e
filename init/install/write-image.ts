// write-image: the byte work of the installer (the payload's gzip'd disk onto the target disk) and of an upgrade
// (the bundle's zstd'd system image onto a SYSTEM partition). The image streams onto the target, hashed on both sides
// of the decompressor as it goes, so a damaged medium, a cut download or a damaged staged file is caught by the
// sha256 it was given; then the target is read back from the device (the page cache dropped first) and hashed again,
// so what the disk holds is what was meant.
import { createHash } from 'node:crypto';
import { close, constants, fsync, open, openSync, read, write } from 'node:fs';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip, createZstdDecompress } from 'node:zlib';
import { hashingStream } from '../../machinery/sys/hashing-stream.ts';
import { collectYoungGarbage } from '../../machinery/sys/young-garbage.ts';

/** Big chunks: a disk takes thousands of writes fewer than with the 16 KiB default. */
const CHUNK = 1 << 20;
/** Zeroed at the end of a larger target: a backup GPT left there by a former table. */
const TAIL_BYTES = 1 << 20;
/**
 * The image's first MiB (protective MBR, primary GPT) is held back and written last, over zeros written first: a
 * disk whose write stopped part-way (a power cut, a kill) has no partition table at all, so it boots nothing
 * half-written and a new install takes it as blank, instead of a table that points into half a system.
 */
const HEAD_BYTES = 1 << 20;

const writeAt = promisify(write);
const fsyncAt = promisify(fsync);
const closeFd = promisify(close);
const openFd = promisify(open);
const readAt = promisify(read);

const mismatch = (what: string, got: string | number, want: string | number) => `${what} is ${got}, not ${want}`;

/** A fresh decompressor for `compression`, handing on 1 MiB at a time. */
const decompressor = (compression: ImageExpectation['compression']) => (compression === 'gzip'
  ? createGunzip({ chunkSize: CHUNK }) : createZstdDecompress({ chunkSize: CHUNK }));

/**
 * The target's cached pages are dropped this often while it is written and read back: a disk's worth of them
 * crowds a small machine (256 MiB, a 134 MB disk) until its programs' own pages are evicted and PID 1 stalls.
 * Every 8 MiB, with the buffers collected at the same time (dropperEvery): a PXE install on a busy host (two CPU
 * hogs beside the VM) answered the API within 0.7, 1.7 and 0.7 s; every 32 MiB without, it went silent for 8.5 s
 * and once for over 28 s (its MemAvailable fell from 79 to 18 MB while 20,000 program pages were read back in).
 */
const DROP_EVERY = 8 << 20;

/**
 * Given the bytes done so far, gives memory back once they have grown by DROP_EVERY since it last did: the
 * target's pages (`dropCache`) and the buffers that carried the bytes (gunzip's fresh 1 MiB each).
 */
function dropperEvery(dropCache: () => Promise<void>): (bytes: number) => Promise<void> | undefined {
  let dropped = 0;
  return (bytes) => {
    if (bytes - dropped < DROP_EVERY) return undefined;
    dropped = bytes;
    collectYoungGarbage();
    return dropCache();
  };
}

/**
 * Writes what streams in at `fd` from offset 0 on, dropping the target's pages every DROP_EVERY bytes. Not
 * fs.createWriteStream: its destroy closes the fd.
 */
function fdSink(fd: number, dropCache: () => Promise<void>, head: Buffer, limit: number, target: string): Writable {
  let pos = 0;
  const drop = dropperEvery(dropCache);
  return new Writable({
    highWaterMark: CHUNK,
    write(chunk: Buffer, _enc, done) {
      if (pos + chunk.length > limit) {
        done(new Error(`the image is larger than ${target} (${limit} bytes): it does not fit`));
        return;
      }
      // The bytes that fall in the head are kept, not written (writeImage writes them last).
      const held = Math.max(0, Math.min(chunk.length, head.length - pos));
      if (held) {
        chunk.copy(head, pos, 0, held);
        pos += held;
      }
      const more = (off: number): void => {
        const dropping = off === chunk.length ? drop(pos) : undefined;
        if (dropping) {
          dropping.then(() => done(), done);
          return;
        }
        if (off === chunk.length) {
          done();
          return;
        }
        write(fd, chunk, off, chunk.length - off, pos, (e, n) => {
          if (e) {
            done(e);
            return;
          }
          pos += n;
          more(off + n);
        });
      };
      more(held);
    },
  });
}

/**
 * What is known of an image before it is written: how it is compressed, the compressed file's size and sha256, and
 * its own once decompressed when known (an install payload's manifest says; an upgrade's image is known by its part).
 */
export interface ImageExpectation {
  compression: 'gzip' | 'zstd';
  compressedSize: number;
  compressedSha256: string;
  size?: number;
  sha256?: string;
}

export interface WriteOptions {
  compressed: Readable;
  /** The device (or, in tests, a file) to write. */
  target: string;
  /** The target's size in bytes: an image that decompresses to more is refused, the target left without its head. */
  targetBytes: number;
  /** An install payload's manifest.disk, an upgrade's image part. */
  image: ImageExpectation;
  /** Where the image comes from, for the error that says it is damaged ("the medium or the download"). */
  source: string;
  /** Hears the bytes of disk written so far. */
  progress: (bytes: number) => void;
  /** Drops the target's cached pages (BLKFLSBUF on a disk). */
  dropCache: () => Promise<void>;
}

/**
 * Writes the disk. The target is opened O_EXCL: the kernel refuses a block device that is mounted or held, the
 * last guard against writing under a filesystem. And O_DSYNC: each write is on the disk when it returns, so the
 * page cache never holds a disk's worth of dirty pages. Without it, a 256 MiB machine writing 134 MB (PXE
 * install, TCG) evicted its own programs' pages and PID 1 stopped answering for over 15 s mid-write (the
 * API's probes: worst 15.7 s and the install's client gave up; with it: 4.7 and 4.9 s, both installs done).
 * Throws an Error naming what did not match.
 */
export async function writeImage(o: WriteOptions): Promise<{ size: number; sha256: string }> {
  try {
    return await writeOpened(o);
  } catch (e) {
    // A source not yet read (the target refused) is closed too: a file's stream would otherwise open and fail
    // later, unheard, once the caller removed it.
    o.compressed.destroy();
    throw e;
  }
}

async function writeOpened(o: WriteOptions): Promise<{ size: number; sha256: string }> {
  let fd: number;
  try {
    fd = openSync(o.target, constants.O_WRONLY | constants.O_EXCL | constants.O_DSYNC);
  } catch (e) {
    throw new Error(`cannot open ${o.target} for writing: ${(e as Error).message}`, { cause: e });
  }
  try {
    const zeroAt = async (at: number, length: number, what: string) => {
      const { bytesWritten } = await writeAt(fd, Buffer.alloc(length), 0, length, at);
      if (bytesWritten !== length) throw new Error(`${o.target}: wrote ${bytesWritten} of ${length} bytes of ${what}`);
    };
    // No table before the disk is whole: the first MiB zeroed now, the former backup GPT too, the image's head last.
    const d = o.image;
    await zeroAt(0, Math.min(HEAD_BYTES, o.targetBytes), 'its first MiB');
    if (d.size !== undefined && o.targetBytes >= d.size + TAIL_BYTES) {
      await zeroAt(o.targetBytes - TAIL_BYTES, TAIL_BYTES, 'its last MiB');
    }
    const head = Buffer.alloc(Math.min(HEAD_BYTES, d.size ?? HEAD_BYTES, o.targetBytes));
    const zDigest = createHash('sha256');
    const rawDigest = createHash('sha256');
    const zTap = hashingStream(zDigest);
    const rawTap = hashingStream(rawDigest, o.progress);
    await pipeline(o.compressed, zTap, decompressor(d.compression), rawTap,
      fdSink(fd, o.dropCache, head, o.targetBytes, o.target));
    const problems = [
      ...(zTap.bytes !== d.compressedSize ? [mismatch(`the compressed image's size`, zTap.bytes, d.compressedSize)]
        : []),
      ...(d.size !== undefined && rawTap.bytes !== d.size
        ? [mismatch(`the image's size once decompressed`, rawTap.bytes, d.size)] : []),
    ];
    const zSum = zDigest.digest('hex');
    const rawSum = rawDigest.digest('hex');
    if (!problems.length && zSum !== d.compressedSha256) {
      problems.push(mismatch(`the compressed image's sha256`, zSum, d.compressedSha256));
    }
    if (!problems.length && d.sha256 !== undefined && rawSum !== d.sha256) {
      problems.push(mismatch(`the image's sha256`, rawSum, d.sha256));
    }
    if (problems.length) throw new Error(`${problems.join('; ')}: ${o.source} is damaged`);
    // Everything else is on the disk (O_DSYNC): now the table that makes it one.
    const { bytesWritten } = await writeAt(fd, head, 0, head.length, 0);
    if (bytesWritten !== head.length) {
      throw new Error(`${o.target}: wrote ${bytesWritten} of its first ${head.length} bytes`);
    }
    // Off PID 1's thread: a flush may wait on the device, and the API answers meanwhile.
    await fsyncAt(fd);
    return { size: rawTap.bytes, sha256: rawSum };
  } finally { await closeFd(fd); } // the last close of a disk syncs and drops its pages: off PID 1's thread too
}

/**
 * Reads the first `size` bytes of `target` back and compares their sha256 with `sha256`. `dropCache` runs first,
 * so the bytes come from the disk rather than from the page cache the writes just filled, and every DROP_EVERY
 * bytes read, so the pages read do not pile up. One buffer serves every read: a read stream's fresh 1 MiB per
 * read is freed only when V8 collects, and V8 lets 64 MB of such garbage gather first, which a 256 MiB machine
 * pays for by evicting its programs' pages (measured in a PXE install: MemAvailable 79 -> 18 MB, PID 1 silent 7 s).
 */
export async function verifyImage(o: {
  target: string; size: number; sha256: string; dropCache: () => Promise<void>; progress: (bytes: number) => void;
}): Promise<void> {
  await o.dropCache();
  const digest = createHash('sha256');
  const drop = dropperEvery(o.dropCache);
  const buf = Buffer.allocUnsafe(CHUNK);
  let done = 0;
  const fd = await openFd(o.target, 'r');
  try {
    while (done < o.size) {
      let bytesRead: number;
      try {
        ({ bytesRead } = await readAt(fd, buf, 0, Math.min(CHUNK, o.size - done), done));
      } catch (e) {
        throw new Error(`cannot read ${o.target} back at byte ${done}: ${(e as Error).message}`, { cause: e });
      }
      if (bytesRead === 0) break;
      digest.update(buf.subarray(0, bytesRead));
      done += bytesRead;
      o.progress(done);
      await drop(done);
    }
  } finally { await closeFd(fd); }
  const sum = digest.digest('hex');
  if (done !== o.size) throw new Error(`${o.target}: read back ${done} bytes of ${o.size}`);
  if (sum !== o.sha256) {
    throw new Error(`${o.target}: read back, its sha256 is ${sum}, not the ${o.sha256} written: the disk does not `
      + 'keep what is written to it');
  }
}
