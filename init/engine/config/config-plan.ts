// config-plan: what applying a config would do, decided without touching anything. Given the
// resources a validated config wants and the machine's resources now, each is to be created,
// updated or left; a replace also deletes the users' resources the config does not name.
// Pure: the state is only read, through the lookups it is handed.
import type { ResourceDocument } from '../../../machinery/config/documents.ts';
import {
  DEFINITION_TYPE, META_NAMESPACE, NAMESPACE_TYPE, resourceName, type ResourceDefinitionSpec,
} from '../../../cosi/meta/definition.ts';
import { newResource, pointerString, type Pointer, type Resource } from '../../../cosi/resource/resource.ts';
import type { SpecCodecs } from '../../../cosi/spec/spec-codec.ts';
import { sameSpec } from '../../../cosi/spec/spec-equal.ts';
import type { ConfigChange } from '../../../machinery/model/runtime-types.ts';
import { API_CERTIFICATE_AUTHORITY_TYPE } from '../../../proto/gen/resource-types.ts';

export type ApplyMode = 'merge' | 'replace';

/** One resource the config wants. */
export interface Desired extends Pointer {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: unknown;
  /** How messages name it: motd/hello. */
  name: string;
  needsReboot: boolean;
}

/** What to do with one resource; `want` is unset for a deletion, `current` for a creation. */
export interface Step {
  action: 'created' | 'updated' | 'deleted' | 'unchanged';
  want?: Desired;
  current?: Resource;
  name: string;
}

export interface PlanInput {
  want: readonly Desired[];
  mode: ApplyMode;
  /** The resource at a pointer now, whoever owns it. */
  find: (p: Pointer) => Resource | undefined;
  /**
   * The machine config now (users' own resources, not requests): what a replace prunes from. Read only by a
   * replace, so a merge may hand an empty list.
   */
  configured: readonly Resource[];
  /** A resource as the state would store it: admission completes a definition (initials, schema). */
  asStored: (r: Resource) => Resource;
  /** How messages name a resource the config does not want. */
  nameOf: (p: Pointer) => string;
  /** Why the sender may not write resources of a type, or undefined: a replace leaves denied types alone. */
  denied?: (type: string) => string | undefined;
}

/** Namespaces first, then definitions, then the rest: the order creation needs (deletion the reverse). */
export const rank = (p: Pointer) => (p.type === NAMESPACE_TYPE ? 0 : p.type === DEFINITION_TYPE ? 1 : 2);

export const byRank = (a: Pointer, b: Pointer) => {
  const ka = pointerString(a);
  const kb = pointerString(b);
  return rank(a) - rank(b) || (ka < kb ? -1 : ka > kb ? 1 : 0);
};

/** A validated document as a resource the config wants, its spec as the State API would store it. */
export function desiredOf(d: ResourceDocument, codecs: SpecCodecs): Desired {
  return {
    namespace: d.namespace, type: d.type, id: d.id, labels: d.labels, annotations: d.annotations,
    // As the State API would store it (a definition completed with its display type and aliases).
    spec: codecs.get(d.type)?.normalize(d.spec) ?? d.spec,
    name: resourceName(d, d.definition), needsReboot: d.definition.needsReboot === true,
  };
}

/** The config as it stands, as wants: what a try is reverted to (a replace by it restores it exactly). */
export function desiredAsIs(resources: readonly Resource[], nameOf: (p: Pointer) => string): Desired[] {
  return resources.map((r) => ({
    namespace: r.metadata.namespace, type: r.metadata.type, id: r.metadata.id,
    labels: { ...r.metadata.labels }, annotations: { ...r.metadata.annotations }, spec: r.spec,
    name: nameOf(r.metadata), needsReboot: false,
  }));
}

/** The steps from the machine's resources now to the config's: one per want, in order, then the deletions. */
export function planConfig(o: PlanInput): Step[] {
  const steps: Step[] = [];
  const wanted = new Set<string>();
  for (const w of o.want) {
    wanted.add(pointerString(w));
    const current = o.find(w);
    if (!current) {
      steps.push({ action: 'created', want: w, name: w.name });
      continue;
    }
    // A definition is stored as admission completes it (initials, schema from its message): compare with that.
    const stored = w.namespace === META_NAMESPACE ? o.asStored(newResource(w, w.spec)).spec : w.spec;
    const same = sameSpec(current.spec, stored)
      && sameSpec(current.metadata.labels, w.labels) && sameSpec(current.metadata.annotations, w.annotations);
    steps.push({ action: same ? 'unchanged' : 'updated', want: w, current, name: w.name });
  }
  if (o.mode === 'replace') {
    // A type's default namespace, created with it, stays while the type does.
    for (const w of o.want) {
      if (w.type !== DEFINITION_TYPE) continue;
      const ns = (w.spec as ResourceDefinitionSpec).defaultNamespace;
      wanted.add(pointerString({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: ns }));
    }
    for (const r of o.configured) {
      if (wanted.has(pointerString(r.metadata)) || o.denied?.(r.metadata.type)) continue;
      // The API CA is the machine's trust, not its settings: a config written without its secrets keeps it
      // (deleting it explicitly returns the machine to maintenance), so that no replace locks every client out.
      if (r.metadata.type === API_CERTIFICATE_AUTHORITY_TYPE) continue;
      steps.push({ action: 'deleted', current: r, name: o.nameOf(r.metadata) });
    }
  }
  return steps;
}

/**
 * What steps change, as reported. `live`: the machine runs, so changes of reboot-only types wait for the next
 * boot; `needsReboot(type)` says it of a deleted resource's type.
 */
export function changesOf(
  steps: readonly Step[], live: boolean, needsReboot: (type: string) => boolean,
): ConfigChange[] {
  return steps.map((s) => ({
    action: s.action, resource: s.name, needsReboot: live && s.action !== 'unchanged' && (s.want?.needsReboot
      ?? needsReboot(s.current!.metadata.type)),
  }));
}
