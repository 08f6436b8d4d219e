// walk-tree: every entry under a directory, depth first, names in sorted order, each with its path relative to the
// directory and its lstat (links are not followed). One walk for what reads a tree whole: a cache key, a listing.
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join, posix } from 'node:path';

export function walkTree(dir: string, visit: (path: string, st: Stats) => void): void {
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = posix.join(rel, name);
      const st = lstatSync(join(dir, path));
      visit(path, st);
      if (st.isDirectory()) walk(path);
    }
  };
  walk('');
}
