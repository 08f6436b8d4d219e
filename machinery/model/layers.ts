// layers: the one ordered list of where declared specs come from, lowest first
// (proto/appliance/v1alpha1/common.proto, enum Layer). A spec that names no layer is
// what a user declared: config.
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

/** Position in LAYERS: higher wins. */
export const layerRank = (spec: { layer?: Layer }): number => LAYERS.indexOf(layerOf(spec));
