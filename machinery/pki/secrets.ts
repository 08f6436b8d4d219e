// secrets: a machine's API secrets as `cosictl gen secrets` makes them: a CA, and a
// client certificate per role (the role is the certificate's Organization). The CA goes
// into the machine config (an ApiCertificateAuthority), the client certificates into
// cosictl contexts. Validity starts in 2000: the machine checks client certificates
// against its own clock, which may be years behind until time is synced.
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import YAML from 'yaml';
import { ROLES, type Role } from '../model/access.ts';
import { generateKey, issueCertificate, keyToPem, type KeyAlgorithm } from './certificate.ts';
import { API_CERTIFICATE_AUTHORITY_TYPE } from '../../proto/gen/resource-types.ts';
import { API_ID } from '../model/singleton-ids.ts';

export interface KeyPair { certificate: string; key: string }

export interface MachineSecrets {
  ca: KeyPair;
  clients: Record<Role, KeyPair>;
}

const VALIDITY_START = new Date('2000-01-01T00:00:00Z');
const DAY_MS = 86_400_000;

export interface SecretsOptions {
  algorithm?: KeyAlgorithm;
  /** Days the CA is valid (default 3650). */
  caDays?: number;
  /** Days the client certificates are valid (default 365). */
  clientDays?: number;
  /** The CA's common name (default "appliance API CA"). */
  name?: string;
  now?: Date;
}

export function generateSecrets(o: SecretsOptions = {}): MachineSecrets {
  const now = o.now ?? new Date();
  const caKey = generateKey(o.algorithm);
  const ca = {
    certificate: issueCertificate({
      subject: { commonName: o.name ?? 'appliance API CA', organization: ['appliance'] },
      publicKey: createPublicKey(caKey), selfKey: caKey, usage: 'ca', notBefore: VALIDITY_START,
      notAfter: new Date(now.getTime() + (o.caDays ?? 3650) * DAY_MS),
    }),
    key: keyToPem(caKey),
  };
  const clients = Object.fromEntries(ROLES.map((role) => [role, clientCertificate(ca, role, {
    days: o.clientDays ?? 365, now, ...(o.algorithm ? { algorithm: o.algorithm } : {}),
  })])) as Record<Role, KeyPair>;
  return { ca, clients };
}

/** A client certificate for `role` from the CA (its common name says who: default cosictl-<role>). */
export function clientCertificate(
  ca: KeyPair, role: Role, o: { days: number; now?: Date; name?: string; algorithm?: KeyAlgorithm },
): KeyPair {
  const key = generateKey(o.algorithm);
  const caCert = new X509Certificate(ca.certificate);
  const notAfter = new Date(Math.min((o.now ?? new Date()).getTime() + o.days * DAY_MS,
    new Date(caCert.validTo).getTime()));
  return {
    certificate: issueCertificate({
      subject: { commonName: o.name ?? `cosictl-${role}`, organization: [role] }, publicKey: createPublicKey(key),
      issuer: { certificate: ca.certificate, key: createPrivateKey(ca.key) }, usage: 'client',
      notBefore: VALIDITY_START, notAfter,
    }),
    key: keyToPem(key),
  };
}

const HEADER = '# The API secrets of a machine (cosictl gen secrets): its CA and a client certificate\n'
  + '# per role. Whoever holds this file is admin of every machine that trusts this CA: keep it secret.\n';

export function secretsToYaml(s: MachineSecrets): string {
  return HEADER + YAML.stringify({ version: 'v1alpha1', ...s }, { lineWidth: 0 });
}

/** Reads a secrets file; throws naming what is missing or unreadable. */
export function secretsFromYaml(text: string, where: string): MachineSecrets {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new Error(`${where}: not YAML: ${(e as Error).message}`);
  }
  const d = doc as Partial<MachineSecrets> & { version?: string };
  if (d?.version !== 'v1alpha1') throw new Error(`${where}: not a secrets file (version v1alpha1 expected)`);
  const pair = (p: Partial<KeyPair> | undefined, what: string): KeyPair => {
    if (typeof p?.certificate !== 'string' || typeof p.key !== 'string') {
      throw new Error(`${where}: ${what} needs a certificate and a key`);
    }
    try {
      new X509Certificate(p.certificate);
      createPrivateKey(p.key);
    } catch (e) {
      throw new Error(`${where}: ${what}: ${(e as Error).message}`);
    }
    return { certificate: p.certificate, key: p.key };
  };
  return {
    ca: pair(d.ca, 'ca'),
    clients: Object.fromEntries(ROLES.map((r) => [r, pair(d.clients?.[r], `clients.${r}`)])) as Record<Role, KeyPair>,
  };
}

/** The machine config document that gives a machine this CA (and accepts clients of `accepted` CAs too). */
export function apiCaDocument(s: Pick<MachineSecrets, 'ca'>, accepted: readonly string[] = []): string {
  return YAML.stringify({
    metadata: { type: API_CERTIFICATE_AUTHORITY_TYPE, id: API_ID },
    spec: { certificate: s.ca.certificate, key: s.ca.key, ...(accepted.length ? { accepted: [...accepted] } : {}) },
  }, { lineWidth: 0 });
}
