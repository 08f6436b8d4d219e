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

/** A deep, mutable copy of a resource (specs are plain data; opaque specs are kept as they are). */
export function copyResource<S>(r: Resource<S>): Resource<S> {
  const spec = r.spec instanceof OpaqueSpec ? r.spec : structuredClone(r.spec);
  return {
    metadata: {
      ...r.metadata, finalizers: [...r.metadata.finalizers], labels: { ...r.metadata.labels },
      annotations: { ...r.metadata.annotations },
    },
    spec,
  };
}
