// freeze: stored resources are immutable; readers get the stored object itself
// (no copy per read) and writers hand in a new one.
import { OpaqueSpec, type Resource } from '../resource/resource.ts';

export function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v) && !(v instanceof Uint8Array)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/**
 * A deep, mutable copy of plain data, as structuredClone makes it (bytes come back as a Uint8Array), by walking it:
 * structuredClone serializes and reads back, which costs more than the copy for the small specs resources have
 * (PID 1 spent ~10 ms of its start in it). What is not plain data goes to structuredClone.
 */
export function copyPlain<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copyPlain) as T;
  if (v instanceof Uint8Array) return new Uint8Array(v) as T;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = copyPlain((v as Record<string, unknown>)[k]);
  return out as T;
}

/** A deep, mutable copy of a resource (specs are plain data; opaque specs are kept as they are). */
export function copyResource<S>(r: Resource<S>): Resource<S> {
  const spec = r.spec instanceof OpaqueSpec ? r.spec : copyPlain(r.spec);
  return {
    metadata: {
      ...r.metadata, finalizers: [...r.metadata.finalizers], labels: { ...r.metadata.labels },
      annotations: { ...r.metadata.annotations },
    },
    spec,
  };
}
