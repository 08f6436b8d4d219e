// root-tree: an image's root filesystem, built in memory from its layers in order as the OCI image spec's
// "applying changesets" says (whiteouts, opaque directories, an entry replacing what was there). Nothing is written
// to the host while building, so no entry can reach outside the root through a link. What it will not take it names,
// entry by entry: absolute or `..` paths, writing through a symbolic link, links that leave the root, device nodes
// and other special files. setuid and setgid bits are dropped (an extension runs with no_new_privs, where they would
// do nothing anyway) and the paths they were on are listed.
import type { TarEntry } from './tar-read.ts';

interface Owned { uid: number; gid: number }
/** A node of the tree; a file's `data` is its bytes, or (unpack.ts) where in its layer they are. */
export type RootNode<D = Buffer> =
  | Owned & { type: 'dir'; mode: number }
  | Owned & { type: 'file'; mode: number; data: D }
  | Owned & { type: 'symlink'; target: string };

export interface LayerOutcome {
  /** Entries refused, each with its path and reason; the layer is not applied when there is any. */
  problems: string[];
  /** Paths whose setuid or setgid bit was dropped. */
  droppedSetid: string[];
}

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';
const SETID = 0o6000;

/** A tar entry's name as a path relative to the root ('' is the root), or why it is not one. */
export function entryPath(name: string): { path: string } | { problem: string } {
  if (name.startsWith('/')) return { problem: 'an absolute path' };
  if (name.includes('\0')) return { problem: 'a NUL byte in the name' };
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return { problem: 'a .. segment' };
  return { path: parts.join('/') };
}

const parentOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
const baseOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Whether a relative link target, followed from the link's directory, stays inside the root. */
export function linkStaysInside(linkPath: string, target: string): boolean {
  if (target.startsWith('/')) return true; // absolute: a path inside the image, which is the root at run time
  let depth = parentOf(linkPath).split('/').filter(Boolean).length;
  for (const part of target.split('/')) {
    if (part === '..') depth--;
    else if (part !== '' && part !== '.') depth++;
    if (depth < 0) return false;
  }
  return true;
}

export class RootTree<D = Buffer> {
  /** Every node by its path relative to the root; the root itself is ''. */
  readonly nodes = new Map<string, RootNode<D>>([['', { type: 'dir', mode: 0o755, uid: 0, gid: 0 }]]);

  /** Applies one layer's entries; refuses the whole layer (nothing changed) when any entry is refused. */
  apply(entries: readonly TarEntry<D>[]): LayerOutcome {
    const problems: string[] = [];
    for (const e of entries) {
      const p = entryPath(e.header.name);
      if ('problem' in p) problems.push(`${e.header.name}: ${p.problem}`);
      const type = e.header.type ?? 'file';
      if (!['file', 'contiguous-file', 'directory', 'symlink', 'link'].includes(type)) {
        problems.push(`${e.header.name}: a ${type} (device nodes and other special files are not taken)`);
      }
      if (type === 'symlink' && 'path' in p && !linkStaysInside(p.path, e.header.linkname ?? '')) {
        problems.push(`${e.header.name}: a symbolic link to ${e.header.linkname} leaves the root`);
      }
      if (type === 'link') {
        const t = entryPath(e.header.linkname ?? '');
        if ('problem' in t) problems.push(`${e.header.name}: a hard link to ${e.header.linkname}: ${t.problem}`);
      }
    }
    if (problems.length) return { problems, droppedSetid: [] };
    const droppedSetid: string[] = [];
    const added = new Set<string>();
    const before = new Map(this.nodes);
    for (const e of entries) {
      const problem = this.applyEntry(e, added, droppedSetid);
      if (problem) problems.push(`${e.header.name}: ${problem}`);
    }
    if (problems.length) {
      this.nodes.clear();
      for (const [k, v] of before) this.nodes.set(k, v);
      return { problems, droppedSetid: [] };
    }
    return { problems, droppedSetid };
  }

  private applyEntry(e: TarEntry<D>, added: Set<string>, droppedSetid: string[]): string | undefined {
    const type = e.header.type ?? 'file';
    const path = (entryPath(e.header.name) as { path: string }).path;
    const base = baseOf(path);
    const dir = parentOf(path);
    const parentProblem = this.ensureDirs(dir, added);
    if (parentProblem) return parentProblem;
    if (base === OPAQUE) {
      // Everything the lower layers had in this directory goes; what this layer put there stays.
      for (const k of [...this.nodes.keys()]) {
        if (k.startsWith(dir ? `${dir}/` : '') && k !== dir && !added.has(k)) this.nodes.delete(k);
      }
      return undefined;
    }
    if (base.startsWith(WHITEOUT)) {
      this.remove(dir ? `${dir}/${base.slice(WHITEOUT.length)}` : base.slice(WHITEOUT.length));
      return undefined;
    }
    if (!path) return undefined; // the root's own entry ("./"): its mode stays ours
    const owner = { uid: e.header.uid ?? 0, gid: e.header.gid ?? 0 };
    let mode = (e.header.mode ?? 0o644) & 0o7777;
    if (mode & SETID) {
      droppedSetid.push(path);
      mode &= ~SETID;
    }
    const existing = this.nodes.get(path);
    if (type === 'directory') {
      if (existing?.type !== 'dir') this.remove(path);
      this.nodes.set(path, { type: 'dir', mode, ...owner });
    } else if (type === 'symlink') {
      this.remove(path);
      this.nodes.set(path, { type: 'symlink', target: e.header.linkname ?? '', ...owner });
    } else if (type === 'link') {
      const target = (entryPath(e.header.linkname ?? '') as { path: string }).path;
      const t = this.nodes.get(target);
      if (t?.type !== 'file') {
        return `a hard link to ${e.header.linkname}, which is ${t ? `a ${t.type}` : 'not there'}`;
      }
      this.remove(path);
      this.nodes.set(path, { ...t });
    } else {
      this.remove(path);
      this.nodes.set(path, { type: 'file', mode, data: e.data, ...owner });
    }
    added.add(path);
    return undefined;
  }

  /** Makes the directories above an entry (archives may leave them out); refuses to write through a link. */
  private ensureDirs(dir: string, added: Set<string>): string | undefined {
    if (!dir) return undefined;
    const parts = dir.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const p = parts.slice(0, i).join('/');
      const n = this.nodes.get(p);
      if (!n) {
        this.nodes.set(p, { type: 'dir', mode: 0o755, uid: 0, gid: 0 });
        added.add(p);
      } else if (n.type === 'symlink') {
        return `its directory ${p} is a symbolic link (a layer may not write through one)`;
      } else if (n.type !== 'dir') return `its directory ${p} is a file`;
    }
    return undefined;
  }

  /** Removes a path and everything under it. */
  private remove(path: string): void {
    const n = this.nodes.get(path);
    this.nodes.delete(path);
    if (n?.type !== 'dir') return;
    for (const k of [...this.nodes.keys()]) if (k.startsWith(`${path}/`)) this.nodes.delete(k);
  }
}
