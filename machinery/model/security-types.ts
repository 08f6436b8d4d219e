// security-types: the API's own security resources (proto/appliance/security), served
// by the engine: the CA users declare, the certificate the engine serves with, and the
// API's limits. See docs/security.md.
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { MAX_YAML_DOCUMENT_BYTES } from '../../cosi/spec/yaml-guard.ts';

export type { ApiCertificateAuthoritySpec, ApiCertificateStatusSpec, ApiLimitsSpec, ApiMode }
  from '../../proto/gen/spec-types.ts';

export const SECURITY_NS = 'security';
export const API_CA_TYPE = 'ApiCertificateAuthorities.security.appliance.dev';
export const API_CERTIFICATE_TYPE = 'ApiCertificateStatuses.security.appliance.dev';
export const API_LIMITS_TYPE = 'ApiLimits.security.appliance.dev';
/** The id of each of the three: there is one API. */
export const API_ID = 'api';

export const SECURITY_NAMESPACES: Record<string, string> = {
  [SECURITY_NS]: "The API's certificate authority, its server certificate and its limits.",
};

export const SECURITY_TYPES: DefinitionInput[] = [
  {
    type: API_CA_TYPE, defaultNamespace: SECURITY_NS, aliases: ['apica'], sensitive: true, access: 'admin',
    protoMessage: MESSAGES.ApiCertificateAuthoritySpec, printColumns: [],
  },
  {
    type: API_CERTIFICATE_TYPE, defaultNamespace: SECURITY_NS, aliases: ['apicert'], access: 'controllers',
    protoMessage: MESSAGES.ApiCertificateStatusSpec,
    printColumns: [
      { name: 'Mode', jsonPath: '{.mode}' }, { name: 'Fingerprint', jsonPath: '{.fingerprint}' },
      { name: 'Names', jsonPath: '{.names}' }, { name: 'Error', jsonPath: '{.error}' },
    ],
  },
  {
    type: API_LIMITS_TYPE, defaultNamespace: SECURITY_NS, displayType: 'ApiLimits', aliases: ['apilimits'],
    access: 'admin', protoMessage: MESSAGES.ApiLimitsSpec,
    printColumns: [
      { name: 'Connections', jsonPath: '{.maxConnections}' }, { name: 'Watches', jsonPath: '{.maxWatches}' },
    ],
  },
];

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
