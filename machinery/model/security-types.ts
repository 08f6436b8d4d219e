// security-types: the API's own security resources (proto/appliance/security), served
// by the engine: the CA users declare, the certificate the engine serves with, and the
// API's limits. See docs/security.md.
import { MAX_YAML_DOCUMENT_BYTES } from '../../cosi/spec/yaml-guard.ts';

export type { ApiCertificateAuthoritySpec, ApiCertificateStatusSpec, ApiLimitsSpec, ApiMode }
  from '../../proto/gen/spec-types.ts';
import { SECURITY_NS } from '../../proto/gen/resource-types.ts';

export const SECURITY_NAMESPACES: Record<string, string> = {
  [SECURITY_NS]: "The API's certificate authority, its server certificate and its limits.",
};

/** Every limit of ApiLimitsSpec, set. */
export type ApiLimits = { [K in keyof ApiLimitsSpecFields]-?: number };
type ApiLimitsSpecFields = import('../../proto/gen/spec-types.ts').ApiLimitsSpec;

/** What each limit is when ApiLimits does not say (docs/security.md lists them). */
export const API_LIMIT_DEFAULTS: ApiLimits = {
  maxRequestBytes: 4 << 20, maxConnections: 256, maxStreamsPerConnection: 320, maxWatchesPerConnection: 256,
  maxWatches: 4096, idleSeconds: 300, handshakeSeconds: 10, maxLabels: 256, maxLabelBytes: 256 << 10,
  maxSpecDepth: 64, maxSpecBytes: MAX_YAML_DOCUMENT_BYTES, maxQueryTerms: 64, maxBufferedBytes: 32 << 20,
};

/** The limits in effect: the spec's, defaults for what it leaves unset. */
export function resolveLimits(spec: ApiLimitsSpecFields | undefined): ApiLimits {
  const out = { ...API_LIMIT_DEFAULTS };
  for (const k of Object.keys(out) as (keyof ApiLimits)[]) {
    const v = spec?.[k];
    if (typeof v === 'number') out[k] = v;
  }
  return out;
}
