// build-cache: a build step that runs again only when what goes into it changed. The step's inputs are reduced to
// one key (a sha256); the key of its last successful run is kept beside its outputs.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CpioEntry } from './cpio.ts';
import { sha256 } from './hash.ts';

/** What a tree of entries is, for a cache key: each entry with its data replaced by the data's sha256. */
export const entriesKey = (entries: readonly CpioEntry[]) => sha256(...entries.map(
  (e) => JSON.stringify({ ...e, data: e.type === 'file' ? sha256(e.data) : undefined }),
));

/** Runs `make` only when `key` differs from the one recorded by the last successful run; true when it ran. */
export async function keyed(
  dir: string, name: string, key: string, outputs: string[], make: () => Promise<void>,
): Promise<boolean> {
  const stamp = join(dir, `${name}.key`);
  if (outputs.every(existsSync) && existsSync(stamp) && readFileSync(stamp, 'utf8') === key) return false;
  await make();
  writeFileSync(stamp, key);
  return true;
}
