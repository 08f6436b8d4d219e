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

/** Position in LAYERS: higher wins. */
export const layerRank = (spec: { layer?: Layer }): number => LAYERS.indexOf(layerOf(spec));
