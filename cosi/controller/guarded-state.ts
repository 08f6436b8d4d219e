// guarded-state: the State a controller sees. Writes only to its declared outputs,
// always with its owner (its name unless it says otherwise); finalizers only on strong inputs; reads only of
// what it declared.
import type { Pointer, Resource } from '../resource/resource.ts';
import { newResource, pointerString } from '../resource/resource.ts';
import { isAlreadyExists, isNotFound, isVersionConflict, StateError } from '../state/errors.ts';
import { addFinalizer, removeFinalizer } from '../state/finalizers.ts';
import { findResource } from '../state/find.ts';
import { copyResource } from '../state/freeze.ts';
import { sameSpec } from '../spec/spec-equal.ts';
import type { State } from '../state/state.ts';
import type { Controller, ControllerState } from './contract.ts';

/** A spec brought to the form the state will store it in (the type's codec); identity by default. */
export type SpecNormalizer = (type: string, spec: unknown) => unknown;

export function guardedState(state: State, c: Controller, normalize: SpecNormalizer = (_t, s) => s): ControllerState {
  const owner = c.owner ?? c.name;
  const outputs = new Set(c.outputs().map((o) => o.type));
  const strong = c.inputs().filter((i) => i.kind === 'strong');
  const readable = new Set([...outputs, ...c.inputs().map((i) => i.type)]);
  const deny = (what: string, p: { type: string }) =>
    new StateError('permission-denied', `controller ${owner}: ${what} ${p.type} is not declared`, p.type);
  const canWrite = (p: { type: string }) => {
    if (!outputs.has(p.type)) throw deny('write to', p);
  };
  const canRead = (p: { type: string }) => {
    if (!readable.has(p.type)) throw deny('read of', p);
  };
  const canFinalize = (p: Pointer) => {
    const declared = strong.some((i) =>
      i.namespace === p.namespace && i.type === p.type && (i.id === undefined || i.id === p.id));
    if (!declared) throw deny('finalizer on (not a strong input)', p);
  };

  const g: ControllerState = {
    get: (p) => {
      canRead(p);
      return state.get(p);
    },
    find: (p) => {
      canRead(p);
      return findResource(state, p);
    },
    list: (k, f) => {
      canRead(k);
      return state.list(k, f);
    },
    async modify<S>(p: Pointer, init: S, mutate?: (r: Resource<S>) => void): Promise<Resource<S>> {
      canWrite(p);
      for (let attempt = 0; ; attempt++) {
        const cur = await g.find(p);
        if (!cur) {
          const r = newResource<S>(p, structuredClone(init));
          mutate?.(r);
          r.spec = normalize(p.type, r.spec) as S;
          try {
            return await state.create(r, { owner }) as Resource<S>;
          } catch (e) {
            if (attempt < 3 && isAlreadyExists(e)) continue;
            throw e;
          }
        }
        if (cur.metadata.owner !== owner) {
          throw new StateError('owner-conflict',
            `controller ${owner}: ${pointerString(p)} is owned by "${cur.metadata.owner}"`, pointerString(p));
        }
        const next = copyResource(cur) as Resource<S>;
        mutate?.(next);
        next.spec = normalize(p.type, next.spec) as S;
        // Writing an unchanged resource would wake every watcher for nothing.
        if (sameSpec(next.spec, cur.spec) && sameSpec(next.metadata, cur.metadata)) return cur as Resource<S>;
        try {
          return await state.update(next, { owner }) as Resource<S>;
        } catch (e) {
          if (attempt < 3 && isVersionConflict(e)) continue;
          throw e;
        }
      }
    },
    put: (p, spec) => g.modify(p, spec, (r) => { r.spec = spec; }),
    teardown: (p) => {
      canWrite(p);
      return state.teardown(p, { owner });
    },
    destroy: (p) => {
      canWrite(p);
      return state.destroy(p, { owner });
    },
    addFinalizer: async (p) => {
      canFinalize(p);
      await addFinalizer(state, p, owner);
    },
    removeFinalizer: async (p) => {
      canFinalize(p);
      try {
        await removeFinalizer(state, p, owner);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
    async cleanup(kind, keep) {
      canWrite(kind);
      const pending: string[] = [];
      for (const r of await state.list(kind)) {
        if (r.metadata.owner !== owner || keep.has(r.metadata.id)) continue;
        const p = { namespace: kind.namespace, type: kind.type, id: r.metadata.id };
        if (await state.teardown(p, { owner })) await state.destroy(p, { owner });
        else pending.push(r.metadata.id);
      }
      return pending;
    },
  };
  return g;
}
