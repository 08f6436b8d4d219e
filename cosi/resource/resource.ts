// resource: what every COSI resource is. A pointer (namespace, type, id), metadata
// kept by the state (version, owner, phase, finalizers, timestamps), labels and
// annotations set by writers, and a spec that is plain data.

export type Phase = 'running' | 'tearingDown';

export interface Pointer { namespace: string; type: string; id: string }

export interface Metadata extends Pointer {
  /** Starts at 1 on create; every update bumps it. 0 only in tombstones ("undefined" on the wire). */
  version: number;
  owner: string;
  phase: Phase;
  /** Milliseconds since the epoch. */
  created: number;
  updated: number;
  finalizers: readonly string[];
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

export interface Resource<S = unknown> {
  metadata: Metadata;
  spec: S;
}

/** A spec whose type has no codec here: carried as the bytes and text it arrived with. */
export class OpaqueSpec {
  constructor(readonly proto: Uint8Array | undefined, readonly yaml: string) {}
}

/** Metadata for a resource about to be created (the state fills in the rest). */
export function newMetadata(
  p: Pointer, extra: Partial<Pick<Metadata, 'labels' | 'annotations' | 'finalizers'>> = {},
): Metadata {
  return {
    ...p, version: 0, owner: '', phase: 'running', created: 0, updated: 0,
    finalizers: extra.finalizers ?? [], labels: extra.labels ?? {}, annotations: extra.annotations ?? {},
  };
}

export function newResource<S>(
  p: Pointer, spec: S, extra: Partial<Pick<Metadata, 'labels' | 'annotations'>> = {},
): Resource<S> {
  return { metadata: newMetadata(p, extra), spec };
}

/** A tombstone stands for a resource that is not there (watch of a missing id, BOOTSTRAPPED, NOOP). */
export function tombstone(p: Pointer): Resource<null> {
  return { metadata: newMetadata(p), spec: null };
}

export function isTombstone(r: Resource): boolean {
  return r.metadata.version === 0;
}

export function pointerString(p: Pointer): string {
  return `${p.namespace}/${p.type}/${p.id}`;
}
