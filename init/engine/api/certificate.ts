// api-certificate: what the users' port serves with. Without an ApiCertificateAuthority
// the API is in maintenance mode: a self-signed certificate whose fingerprint goes to
// the console (so the first client can check it) and no client certificates. With one,
// the machine issues its own server certificate from that CA, naming its hostname and
// addresses, and requires client certificates that chain to it (or to an accepted CA).
// It issues again when the CA, the hostname or an address changes, and publishes what
// it serves with as ApiCertificateStatus. The certificate's validity follows the CA's,
// not this machine's clock, which may be years off until time is synced (an RTC in the
// past must not lock the admins out; `cosictl gen secrets` starts validity in 2000 for
// the same reason, as the machine checks client certificates against its own clock).
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import { ipFamily } from '../../../machinery/sys/ip-literal.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { Controller } from '../../../cosi/controller/contract.ts';
import { upsert } from '../../../cosi/state/upsert.ts';
import type { Logger } from '../../../machinery/log.ts';
import { fingerprint, generateKey, issueCertificate, keyToPem } from '../../../machinery/pki/certificate.ts';
import {
  resolveLimits, type ApiCertificateAuthoritySpec, type ApiCertificateStatusSpec, type ApiLimits, type ApiLimitsSpec,
} from '../../../machinery/model/security-types.ts';
import type { ApiTls } from './server.ts';
import {
  API_CERTIFICATE_AUTHORITY_TYPE, API_CERTIFICATE_STATUS_TYPE, API_LIMITS_TYPE, HOSTNAME_SPEC_STATUS_TYPE,
  LINK_STATUS_TYPE, NETWORK_NS, SECURITY_NS,
} from '../../../proto/gen/resource-types.ts';
import { API_ID } from '../../../machinery/model/singleton-ids.ts';

/** The validity start of the maintenance certificate: any clock is past it. */
const EPOCH = new Date('2000-01-01T00:00:00Z');

/**
 * The machine's names as the kernel has them now: its hostname and addresses (IPv6
 * link-local aside, which need a zone), and loopback's, so that a client on the machine
 * or at the end of a port forward to it can check the certificate too.
 */
export function machineNames(): string[] {
  const names = new Set<string>();
  const h = hostname();
  if (h && h !== 'localhost' && h !== '(none)' && /^[a-z0-9.-]+$/i.test(h)) names.add(h.toLowerCase());
  // Loopback's addresses whether or not lo is up yet: the API serves before the network plugin brings it up, and a
  // client at the end of a port forward (127.0.0.1:PORT) that connects then must find its name (api.test's health
  // --wait, typed as QEMU starts, met a certificate without it on a loaded host).
  names.add('localhost');
  names.add('127.0.0.1');
  names.add('::1');
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family === 'IPv6' && /^fe[89ab]/i.test(a.address)) continue;
      names.add(a.address.replace(/%.*$/, ''));
    }
  }
  return [...names].filter((n) => ipFamily(n) || n.length <= 253);
}

interface Issued { tls: ApiTls; status: ApiCertificateStatusSpec }

/** The TLS material for a CA (or its absence), or the reason the CA cannot be used. */
export function tlsFor(ca: ApiCertificateAuthoritySpec | undefined, serverKey: KeyObject, names: string[]):
  Issued | { error: string } {
  if (!ca) {
    const certificate = issueCertificate({
      subject: { commonName: 'appliance (maintenance)' }, publicKey: createPublicKey(serverKey), selfKey: serverKey,
      usage: 'server', notBefore: EPOCH, notAfter: new Date('2099-12-31T00:00:00Z'), names,
    });
    return {
      tls: { mode: 'maintenance', certificate, key: keyToPem(serverKey), clientCAs: [] },
      status: {
        mode: 'maintenance', fingerprint: fingerprint(certificate), names, issuer: 'self-signed', clientCas: [],
        notAfter: '2099-12-31T00:00:00.000Z', error: '',
      },
    };
  }
  let caCert: X509Certificate;
  let caKey: KeyObject;
  let accepted: X509Certificate[];
  try {
    caCert = new X509Certificate(ca.certificate);
    caKey = createPrivateKey(ca.key);
    accepted = (ca.accepted ?? []).map((pem) => new X509Certificate(pem));
  } catch (e) { return { error: `the API CA cannot be read: ${(e as Error).message}` }; }
  if (!caCert.ca) return { error: 'the API CA certificate is not a CA certificate (basicConstraints CA:FALSE)' };
  if (!caCert.checkPrivateKey(caKey)) return { error: "the API CA's key is not the key of its certificate" };
  const certificate = issueCertificate({
    subject: { commonName: names[0] ?? 'appliance' }, publicKey: createPublicKey(serverKey),
    issuer: { certificate: ca.certificate, key: caKey }, usage: 'server',
    notBefore: new Date(caCert.validFrom), notAfter: new Date(caCert.validTo), names,
  });
  const clientCAs = [ca.certificate, ...(ca.accepted ?? [])];
  return {
    tls: { mode: 'secured', certificate, key: keyToPem(serverKey), clientCAs },
    status: {
      mode: 'secured', fingerprint: fingerprint(certificate), names, issuer: caCert.subject.replace(/\n/g, ','),
      notAfter: new Date(caCert.validTo).toISOString(), clientCas: [caCert, ...accepted].map((c) => c.fingerprint256),
      error: '',
    },
  };
}

export interface ApiCertificateOptions {
  state: MemoryState;
  log: Logger;
  /** Lines for the console (the maintenance fingerprint): PID 1's console, a host's stderr. */
  announce: (line: string) => void;
  owner: string;
}

export interface ApiCertificate {
  /** What to serve with now. */
  readonly tls: ApiTls;
  readonly limits: ApiLimits;
  /**
   * The engine controller that follows the CA, the limits and the machine's names (engine-controllers.ts): it
   * issues again and publishes ApiCertificateStatus, and tells the API each change once it serves.
   */
  readonly controller: Controller;
  /** The API to tell from now on; told what to serve with at once (a change may have come while it started). */
  serve(apply: TlsSink): void;
}

/** What the API server takes from here. */
export interface TlsSink { setTls(t: ApiTls): void; setLimits(l: ApiLimits): void }

export async function apiCertificate(o: ApiCertificateOptions): Promise<ApiCertificate> {
  const serverKey = generateKey();
  const find = <T>(type: string) =>
    o.state.findSync({ namespace: SECURITY_NS, type, id: API_ID })?.spec as T | undefined;
  let names = machineNames();
  let caText = '';
  let current: Issued | undefined;
  const statusPtr = { namespace: SECURITY_NS, type: API_CERTIFICATE_STATUS_TYPE, id: API_ID };
  type Publish = (status: ApiCertificateStatusSpec) => Promise<unknown>;
  /** Issues for the CA and names now; the previous material stays when the CA cannot be used. */
  const issue = async (publish: Publish): Promise<boolean> => {
    const ca = find<ApiCertificateAuthoritySpec>(API_CERTIFICATE_AUTHORITY_TYPE);
    const next = tlsFor(ca, serverKey, names);
    caText = JSON.stringify(ca ?? null);
    if ('error' in next) {
      o.log.error(`API certificate: ${next.error}; the API stays ${current?.tls.mode ?? 'in maintenance'}`);
      if (current) await publish({ ...current.status, error: next.error });
      return false;
    }
    current = next;
    await publish(next.status);
    if (next.tls.mode === 'maintenance') {
      o.announce(`API in maintenance mode: TLS certificate fingerprint ${next.status.fingerprint}`);
    } else o.log.info(`API certificate issued for ${names.join(', ') || 'no names'} by ${next.status.issuer}`);
    return true;
  };
  // At boot, before the runtime runs: the API starts with what this issues.
  const publishNow: Publish = (status) => upsert(o.state, statusPtr, status, o.owner);
  await issue(publishNow);
  if (!current) {
    // A CA that cannot be used at boot: maintenance, so that a good one can be applied.
    const fallback = tlsFor(undefined, serverKey, names) as Issued;
    current = fallback;
    await publishNow({ ...fallback.status, error: 'the configured API CA cannot be used (see the log)' });
    o.announce(`API in maintenance mode: TLS certificate fingerprint ${fallback.status.fingerprint}`);
  }
  let limits = resolveLimits(find<ApiLimitsSpec>(API_LIMITS_TYPE));
  let api: TlsSink | undefined;
  const kinds = [[SECURITY_NS, API_CERTIFICATE_AUTHORITY_TYPE], [SECURITY_NS, API_LIMITS_TYPE],
    [NETWORK_NS, LINK_STATUS_TYPE], [NETWORK_NS, HOSTNAME_SPEC_STATUS_TYPE]] as const;
  const controller: Controller = {
    name: 'api-certificate', owner: o.owner,
    inputs: () => kinds.map(([namespace, type]) => ({ namespace, type, kind: 'weak' as const })),
    outputs: () => [{ type: API_CERTIFICATE_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const publish: Publish = (status) => ctx.state.put(statusPtr, status);
      while (await ctx.next()) {
        const nextNames = machineNames();
        const ca = JSON.stringify(find(API_CERTIFICATE_AUTHORITY_TYPE) ?? null);
        // In maintenance no client can check names: the certificate, and the fingerprint shown, stay.
        const renamed = nextNames.join() !== names.join() && current!.tls.mode === 'secured';
        if (ca !== caText || renamed) {
          names = nextNames;
          if (await issue(publish)) api?.setTls(current!.tls);
        }
        const nextLimits = resolveLimits(find<ApiLimitsSpec>(API_LIMITS_TYPE));
        if (JSON.stringify(nextLimits) !== JSON.stringify(limits)) {
          limits = nextLimits;
          api?.setLimits(limits);
          o.log.info(`API limits: ${JSON.stringify(limits)}`);
        }
      }
    },
  };
  return {
    get tls() { return current!.tls; },
    get limits() { return limits; },
    controller,
    serve(apply) {
      api = apply;
      apply.setTls(current!.tls);
      apply.setLimits(limits);
    },
  };
}
