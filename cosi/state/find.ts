// find: get, or undefined when the resource is not there (any other error is thrown).
import type { Pointer, Resource } from '../resource/resource.ts';
import { isNotFound } from './errors.ts';
import type { State } from './state.ts';

export async function findResource(state: State, p: Pointer): Promise<Resource | undefined> {
  try {
    return await state.get(p);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
