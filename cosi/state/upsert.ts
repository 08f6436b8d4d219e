// upsert: the engine's own writes (meta definitions, plugin and boot status): create
// the resource, or update it when its spec changed; `owner` writes it either way.
import { newResource, type Pointer, type Resource } from '../resource/resource.ts';
import { findResource } from './find.ts';
import { copyResource } from './freeze.ts';
import { sameSpec } from '../spec/spec-equal.ts';
import type { State } from './state.ts';

export async function upsert(state: State, p: Pointer, spec: unknown, owner: string): Promise<Resource> {
  const cur = await findResource(state, p);
  if (!cur) return state.create(newResource(p, spec), { owner });
  if (sameSpec(cur.spec, spec)) return cur;
  return state.update({ ...copyResource(cur), spec }, { owner });
}

/** Destroys the resource when there is one (the engine's own writes: a status whose subject is gone). */
export async function destroyIfPresent(state: State, p: Pointer, owner: string): Promise<void> {
  if (await findResource(state, p)) await state.destroy(p, { owner });
}
