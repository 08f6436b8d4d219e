// unpack: an image's layers written as a directory tree, in bounded memory, by the rules of root-tree.ts. Two passes
// over the layers: the first reads every entry's header (not its bytes) into a RootTree, checks each layer against the
// diff_id its config names and stops at the limits (bytes, entries); the second writes the tree: directories first
// (so no write can pass through a link the image holds: links are made last), each file's bytes streamed from the one
// entry the tree keeps for it (a hard link and its target are one file), then links, then modes, deepest first. Used
// by the appliance build (into its staging directory, then packed) and by the machine (an extension pulled from a
// registry, kept as the directory its launcher binds read-only).
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { Duplex, PassThrough, type Readable, type Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import type { Header } from 'tar-stream';
import { hashingStream } from '../sys/hashing-stream.ts';
import { RootTree } from './root-tree.ts';
import { eachTarEntry, NotTarArchive, type TarEntry } from './tar-read.ts';

export type Compression = 'none' | 'gzip' | 'zstd';

/** One layer as its image gives it: compressed bytes opened afresh for each pass, checked by whoever opens them. */
export interface LayerSource {
  /** How it is named in what is said of it: "layer 0 (sha256:...)". */
  what: string;
  compression: Compression;
  /** The sha256 of its uncompressed tar, as the image's config names it. */
  diffId: string;
  open(): Readable;
}

export interface UnpackLimits {
  /** The most a layer may hold uncompressed, and the most the files of the tree may hold together. */
  maxBytes: number;
  /** The most entries the layers may hold together (each costs memory in the first pass). */
  maxEntries: number;
}

/** Generous for a program and its runtime; a compressed bomb stops here. */
export const DEFAULT_UNPACK_LIMITS: UnpackLimits = { maxBytes: 4 * 2 ** 30, maxEntries: 500_000 };

/** What the layers themselves refuse: every reason; another try gives the same. */
export class LayersRefused extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'LayersRefused';
  }
}

/** Where a file's bytes are: entry `index` of layer `layer`, `size` bytes. */
interface EntryRef { layer: number; index: number; size: number }

/** A decompressing stream: node:zlib's, or for zstd on a Node without it (before 22.15), the zstd tool's. */
function decompressor(c: Compression): Transform | Duplex {
  if (c === 'gzip') return zlib.createGunzip();
  if (c === 'none') return new PassThrough();
  const native = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;
  if (native) return native();
  const child = spawn('zstd', ['-dc'], { stdio: ['pipe', 'pipe', 'ignore'] });
  return Duplex.from({ writable: child.stdin, readable: child.stdout });
}

/** The layer's tar, decompressed and hashed as it streams, bounded by `maxBytes`. */
function layerTar(l: LayerSource, maxBytes: number) {
  const hash = createHash('sha256');
  const source = l.open();
  const plain = decompressor(l.compression);
  const counted = hashingStream(hash, (total) => {
    if (total > maxBytes) counted.destroy(new LayersRefused([`${l.what}: more than ${maxBytes} bytes uncompressed`]));
  });
  let settled = false;
  const fail = (e: Error) => {
    if (settled) return;
    settled = true;
    counted.destroy(e);
  };
  source.on('error', fail); // a read, or the digest its opener checks: its own error
  plain.on('error', (e: Error) => {
    // Undecompressable: the rest is read first, for a changed blob's digest is the better reason to give.
    const why = new LayersRefused([`${l.what}: does not decompress as ${l.compression}: ${e.message}`]);
    source.unpipe(plain);
    finished(source).then(() => fail(why), (read: Error) => fail(read));
    source.resume();
  });
  source.pipe(plain).pipe(counted);
  return { stream: counted as Readable, digest: () => `sha256:${hash.digest('hex')}` };
}

/** What a header says that the tree needs (not what else it carries: the first pass keeps every one). */
const slim = (h: Header, data: EntryRef): TarEntry<EntryRef> => ({
  header: { name: h.name, type: h.type, mode: h.mode, uid: h.uid, gid: h.gid, linkname: h.linkname },
  data,
});

/**
 * Writes the image whose layers are `layers` (in order) into `root` (an empty directory, made when absent); returns
 * the paths whose setuid/setgid bits were dropped and the bytes written. What the layers refuse is LayersRefused; a
 * source that fails (a read, a digest its opener checks) rejects with the source's own error.
 */
export async function unpackLayers(
  layers: readonly LayerSource[], root: string, limits: UnpackLimits = DEFAULT_UNPACK_LIMITS,
): Promise<{ droppedSetid: string[]; bytes: number }> {
  const tree = new RootTree<EntryRef>();
  const droppedSetid: string[] = [];
  let entries = 0;
  for (const [i, l] of layers.entries()) {
    const tar = layerTar(l, limits.maxBytes);
    const read: TarEntry<EntryRef>[] = [];
    await eachTarEntry(tar.stream, l.what, async (h, _body, index) => {
      if (++entries > limits.maxEntries) {
        throw new LayersRefused([`${l.what}: more than ${limits.maxEntries} entries in the image`]);
      }
      read.push(slim(h, { layer: i, index, size: h.size ?? 0 }));
    }).catch((e: unknown) => {
      throw e instanceof NotTarArchive ? new LayersRefused([e.message]) : e;
    });
    await finished(tar.stream); // the whole layer, padding after the end marker too, is in its digest
    if (tar.digest() !== l.diffId) throw new LayersRefused([`${l.what}: does not match the config's diff_id`]);
    const outcome = tree.apply(read);
    if (outcome.problems.length) throw new LayersRefused(outcome.problems.map((p) => `${l.what}: ${p}`));
    droppedSetid.push(...outcome.droppedSetid);
  }
  const files = new Map<string, { ref: EntryRef; paths: string[] }>();
  for (const [path, n] of tree.nodes) {
    if (n.type !== 'file') continue;
    const key = `${n.data.layer}:${n.data.index}`;
    const f = files.get(key);
    if (f) f.paths.push(path);
    else files.set(key, { ref: n.data, paths: [path] });
  }
  const bytes = [...files.values()].reduce((sum, f) => sum + f.ref.size, 0);
  if (bytes > limits.maxBytes) throw new LayersRefused([`its files hold ${bytes} bytes, more than ${limits.maxBytes}`]);
  await writeTree(tree, files, layers, root, limits.maxBytes);
  return { droppedSetid: [...new Set(droppedSetid)], bytes };
}

async function writeTree(
  tree: RootTree<EntryRef>, files: ReadonlyMap<string, { ref: EntryRef; paths: string[] }>,
  layers: readonly LayerSource[], root: string, maxBytes: number,
): Promise<void> {
  const paths = [...tree.nodes.keys()].sort();
  mkdirSync(root, { recursive: true, mode: 0o700 });
  for (const p of paths) if (p && tree.nodes.get(p)!.type === 'dir') mkdirSync(join(root, p), { mode: 0o700 });
  const wanted = new Set([...files.values()].map((f) => f.ref.layer));
  for (const [i, l] of layers.entries()) {
    if (!wanted.has(i)) continue;
    await eachTarEntry(layerTar(l, maxBytes).stream, l.what, async (_h, body, index) => {
      const f = files.get(`${i}:${index}`);
      if (!f) return;
      const [first, ...others] = f.paths as [string, ...string[]];
      const out = await open(join(root, first), 'wx', 0o600);
      try {
        for await (const chunk of body) await out.write(chunk);
      } finally {
        await out.close();
      }
      for (const other of others) linkSync(join(root, first), join(root, other));
    });
  }
  for (const p of paths) {
    const n = tree.nodes.get(p)!;
    if (n.type === 'symlink') symlinkSync(n.target, join(root, p));
  }
  // Deepest first: a directory without write or search permission is filled before its mode is set.
  for (const p of paths.reverse()) {
    const n = tree.nodes.get(p)!;
    if (n.type !== 'symlink') chmodSync(join(root, p), n.mode);
  }
}
