// finalizers: add/remove a finalizer with any State. There is no RPC for it: read,
// change, update with the stored owner and version, and retry on a version conflict
// (another writer got there first).
import type { Pointer, Resource } from '../resource/resource.ts';
import { copyResource } from './freeze.ts';
import { isVersionConflict } from './errors.ts';
import type { State } from './state.ts';

/** Applies `change` to a fresh copy until the update lands; null from `change` means nothing to do. */
export async function modifyWithRetry(
  state: State, p: Pointer, change: (r: Resource) => Resource | null, attempts = 100,
): Promise<Resource> {
  for (let i = 0; ; i++) {
    const cur = await state.get(p);
    const next = change(copyResource(cur));
    if (!next) return cur;
    try {
      return await state.update(next, { owner: cur.metadata.owner });
    } catch (e) {
      if (!isVersionConflict(e) || i >= attempts) throw e;
    }
  }
}

export function addFinalizer(state: State, p: Pointer, ...names: string[]): Promise<Resource> {
  return modifyWithRetry(state, p, (r) => {
    const missing = names.filter((n) => !r.metadata.finalizers.includes(n));
    if (!missing.length) return null;
    r.metadata.finalizers = [...r.metadata.finalizers, ...missing];
    return r;
  });
}

export function removeFinalizer(state: State, p: Pointer, ...names: string[]): Promise<Resource> {
  return modifyWithRetry(state, p, (r) => {
    if (!names.some((n) => r.metadata.finalizers.includes(n))) return null;
    r.metadata.finalizers = r.metadata.finalizers.filter((f) => !names.includes(f));
    return r;
  });
}
