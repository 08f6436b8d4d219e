// network-config: cloud-init's network configuration, version 1 (network-config-v1.ts) and
// version 2 / netplan (network-config-v2.ts), -> the platform's network (PlatformNetworkSpec).
// Nothing is dropped silently: every key is applied or listed in `ignored` with its path and
// why (key-reader.ts), and the list reaches `cosictl get configstatus`.
import type { PlatformNetworkSpec } from '../../../proto/gen/spec-types.ts';
import { isMap } from '../safe-yaml.ts';
import { fromV1 } from './network-config-v1.ts';
import { fromV2 } from './network-config-v2.ts';

export { prefixOf } from './network-config-common.ts';

export type NetworkTranslation =
  | { ok: true; network: PlatformNetworkSpec; applied: string[] }
  | { ok: false; message: string };

/** The document may be the config itself or wrapped in `network:`. */
export function translateNetworkConfig(doc: unknown): NetworkTranslation {
  const cfg = isMap(doc) && isMap(doc.network) ? doc.network : doc;
  if (!isMap(cfg)) return { ok: false, message: 'network-config: must be a mapping' };
  if (cfg.version === 2 || cfg.version === '2') return { ok: true, ...fromV2(cfg) };
  if (cfg.version === 1 || cfg.version === '1') return { ok: true, ...fromV1(cfg) };
  return { ok: false, message: `network-config: version ${JSON.stringify(cfg.version)} is not 1 or 2` };
}
