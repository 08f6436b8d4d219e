// extension-fetch: an extension's image brought to the machine and checked before anything reads
// it. From an http(s) URL or a path on the machine, streamed into a file beside where it will live
// while its sha256 is computed, kept only when the hash is the one declared, under a name that is
// that hash (the same image declared twice is one file; a new version is a new file, so the old
// one stays usable until the new one is running). A body longer than allowed, cut short, or of
// another hash leaves nothing behind. Each fetch writes its own temporary file (two fetches of one
// image do not share one), synced before it takes its name (a power cut leaves no half image).
// From a path only a regular file is read (not a FIFO that never ends, not a device), and its hash
// is not said when it differs (the file may be anything root can read). A kept image's modification time is when
// it was last used (each fetch that finds it sets it): one unused for IMAGE_KEEP_MS is removed (sweepUnusedImages),
// so the images of every version an upgrade left behind do not fill /var. A kept image is hashed again before it is
// used, once a boot (again only when its size or time changed since).
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync, createReadStream, createWriteStream, existsSync, fsyncSync, mkdirSync, openSync, renameSync,
  rmSync, statSync, utimesSync, type WriteStream,
} from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { hashingStream } from '../../../machinery/sys/hashing-stream.ts';
import { httpOpen } from '../../../machinery/sys/http-get.ts';
import { syncDirectory } from '../../../machinery/sys/atomic-write.ts';
import { listDir } from '../../../machinery/sys/optional-fs.ts';
import { discardPartial } from '../../../machinery/sys/partial-file.ts';

/** Larger images are refused: an extension is a plugin and its runtime, not a disk. */
export const MAX_EXTENSION_BYTES = 1 << 30;

/** A source that fetching again would not mend: another image, not another try, is needed. */
export class RefusedImage extends Error {}

export interface FetchedImage { path: string; bytes: number; reused: boolean }

/** An image's sha256 as specs say it: 64 lowercase hex digits. */
export const SHA256_RE = /^[0-9a-f]{64}$/;

/** Where the image of this hash is kept in `dir`. */
export const imagePath = (dir: string, sha256: string) => join(dir, `${sha256}.squashfs`);

async function open(source: string, idleMs: number): Promise<{ stream: Readable; declared?: number }> {
  if (/^https?:\/\//.test(source)) {
    const res = await httpOpen(source, idleMs);
    const length = Number(res.headers['content-length']);
    return { stream: res, ...(Number.isFinite(length) ? { declared: length } : {}) };
  }
  if (!source.startsWith('/')) {
    throw new RefusedImage(`${source}: want an http(s) URL or an absolute path on the machine`);
  }
  if (!statSync(source).isFile()) throw new RefusedImage(`${source}: not a regular file`);
  return { stream: createReadStream(source) };
}

/**
 * The image `source` names, kept in `dir` as <sha256>.squashfs once its hash is `sha256` (lowercase hex);
 * an Error that names the source and what went wrong otherwise. One already there is checked again, not fetched.
 */
export async function fetchImage(
  source: string, sha256: string, dir: string, o: { maxBytes?: number; idleMs?: number } = {},
): Promise<FetchedImage | Error> {
  if (!SHA256_RE.test(sha256)) return new RefusedImage(`sha256 "${sha256}": want 64 lowercase hex digits`);
  const maxBytes = o.maxBytes ?? MAX_EXTENSION_BYTES;
  const final = imagePath(dir, sha256);
  const partial = join(dir, `.${sha256}.${randomBytes(4).toString('hex')}.partial`);
  const hash = createHash('sha256');
  let sink: WriteStream | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (existsSync(final)) {
      // Damaged or unreadable since it was kept: fetched anew. Checked once a boot (a push or a replacement finds it
      // again within seconds, and the file is root's).
      const again = checkedThisBoot(final, sha256) ? sha256 : await hashOf(final).catch((e: Error) => e);
      if (again === sha256) {
        const now = new Date();
        utimesSync(final, now, now); // used now: kept another IMAGE_KEEP_MS
        rememberChecked(final, sha256);
        return { path: final, bytes: statSync(final).size, reused: true };
      }
      rmSync(final, { force: true });
    }
    const { stream, declared } = await open(source, o.idleMs ?? 30_000);
    if (declared !== undefined && declared > maxBytes) {
      stream.destroy();
      return new RefusedImage(`${source}: ${declared} bytes, more than the ${maxBytes} an extension may have`);
    }
    const counter = hashingStream(hash, (total) => {
      if (total > maxBytes) counter.destroy(new RefusedImage(`more than the ${maxBytes} bytes an extension may have`));
    });
    sink = createWriteStream(partial, { mode: 0o600, flags: 'wx' });
    await pipeline(stream, counter, sink);
    if (declared !== undefined && counter.bytes !== declared) {
      throw new Error(`${source}: cut short: ${counter.bytes} of ${declared} bytes`);
    }
    const got = hash.digest('hex');
    if (got !== sha256) {
      const said = /^https?:/.test(source) ? `${got}, ` : '';
      throw new RefusedImage(`${source}: its sha256 is ${said}not the ${sha256} declared`);
    }
    const fd = openSync(partial, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, final);
    syncDirectory(dir);
    rememberChecked(final, sha256);
    return { path: final, bytes: counter.bytes, reused: false };
  } catch (e) {
    await discardPartial(sink, partial);
    const message = (e as Error).message;
    if (message.startsWith(source)) return e as Error;
    return e instanceof RefusedImage ? new RefusedImage(`${source}: ${message}`, { cause: e })
      : new Error(`${source}: ${message}`, { cause: e });
  }
}

/**
 * Removes what fetches the machine stopped in left (`.<sha>.<random>.partial`: a power cut or a SIGKILL mid-fetch;
 * a fetch that fails removes its own). Called once as the runner starts, before any fetch of its own; returns the
 * names removed.
 */
export function sweepPartials(dir: string): string[] {
  // A pull's partial is a directory (oci-fetch.ts); a push's is named .<sha>.push.partial (extension-push.ts).
  const left = listDir(dir).filter((n) => /^\.[0-9a-f]{64}\.([0-9a-f]+|push)\.partial$/.test(n));
  for (const n of left) rmSync(join(dir, n), { recursive: true, force: true });
  return left;
}

/** How long a kept image no extension uses stays: a day, time for a rollback to find its images without a fetch. */
export const IMAGE_KEEP_MS = 24 * 3600_000;

/**
 * Removes the kept images of `dir` (files, and the trees of pulled ones) not used for `keepMs` (their modification
 * time), except those in `inUse` (sha256s); returns the names removed.
 */
export function sweepUnusedImages(dir: string, inUse: ReadonlySet<string>, keepMs = IMAGE_KEEP_MS,
  now = Date.now()): string[] {
  const old = listDir(dir).filter((n) => {
    const m = /^([0-9a-f]{64})\.(squashfs|oci)$/.exec(n);
    return m && !inUse.has(m[1]!) && now - statSync(join(dir, n)).mtimeMs > keepMs;
  });
  for (const n of old) rmSync(join(dir, n), { recursive: true, force: true });
  return old;
}

/** The kept images whose hash was checked since this boot, by path: their size and modification time then. */
const checked = new Map<string, { sha256: string; size: number; mtimeMs: number }>();

/** Records that the image at `path` was found to be `sha256` now (a fetch, a push). */
export function rememberChecked(path: string, sha256: string): void {
  const st = statSync(path);
  checked.set(path, { sha256, size: st.size, mtimeMs: st.mtimeMs });
}

/** Whether `path` was checked to be `sha256` this boot and has not changed since (its size and time). */
function checkedThisBoot(path: string, sha256: string): boolean {
  const c = checked.get(path);
  if (c?.sha256 !== sha256) return false;
  const st = statSync(path);
  return st.size === c.size && st.mtimeMs === c.mtimeMs;
}

async function hashOf(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
