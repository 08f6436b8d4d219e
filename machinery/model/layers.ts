// layers: the one ordered list of where declared specs come from, lowest first
// (proto/appliance/v1alpha1/common.proto, enum Layer). A spec that names no layer is
// what a user declared: config.
import type { SpecSchema } from '../../cosi/meta/schema.ts';
import { LayerValues, type Layer } from '../../proto/gen/spec-types.ts';

export type { Layer };

/** Lowest first: default < cmdline < platform < dhcp < config. */
export const LAYERS: readonly Layer[] = LayerValues;

/** The layer of a spec that names none. */
export const UNSAID_LAYER: Layer = 'config';

export const layerOf = (spec: { layer?: Layer }): Layer => spec.layer ?? UNSAID_LAYER;

/** Annotation on a merged spec: its sources, winner first, as layer:id (written by plugins/sdk/merge-controller). */
export const SOURCES_ANNOTATION = 'appliance.dev/sources';

export interface MergeSource { layer: string; id: string }

// An id may hold a comma: it is written %2C (and % as %25), so the list splits where it should.
const escapeId = (id: string) => id.replace(/%/g, '%25').replace(/,/g, '%2C');
const unescapeId = (id: string) => id.replace(/%2C/g, ',').replace(/%25/g, '%');

export const formatSources = (sources: readonly MergeSource[]): string =>
  sources.map((s) => `${s.layer}:${escapeId(s.id)}`).join(',');

/** The sources a merged spec names (none when it has no such annotation; an entry without a layer is skipped). */
export function sourcesOf(annotations: Readonly<Record<string, string>>): MergeSource[] {
  const text = annotations[SOURCES_ANNOTATION];
  if (!text) return [];
  return text.split(',').filter((s) => s.includes(':'))
    .map((s) => ({ layer: s.slice(0, s.indexOf(':')), id: unescapeId(s.slice(s.indexOf(':') + 1)) }));
}

/** Who writes each layer: users write the config layer only, the others belong to the machine's own writers. */
export const LAYER_WRITERS: Readonly<Record<Layer, string>> = {
  default: 'the machine\'s built-in defaults', cmdline: 'the kernel command line (as the plugins read it)',
  platform: 'the platform plugin (cloud or hypervisor metadata)', dhcp: 'the DHCP client', config: 'the machine config',
};

/** A layered type: its specs say their layer (the `layer` field), unset meaning config. */
export const isLayered = (schema: SpecSchema | undefined): boolean =>
  schema?.type === 'object' && schema.properties?.layer !== undefined;

/**
 * The layer other than config a spec of a layered type (one whose schema has the `layer` field) says it is of;
 * undefined for a config-layer spec, or a type without layers.
 */
export function foreignLayer(schema: SpecSchema | undefined, spec: unknown): Layer | undefined {
  if (!isLayered(schema)) return undefined;
  if (typeof spec !== 'object' || spec === null) return undefined;
  const layer = (spec as { layer?: unknown }).layer;
  return typeof layer === 'string' && layer !== UNSAID_LAYER && (LAYERS as readonly string[]).includes(layer)
    ? layer as Layer : undefined;
}

/** Position in LAYERS: higher wins. */
export const layerRank = (spec: { layer?: Layer }): number => LAYERS.indexOf(layerOf(spec));
