// certificate: X.509 v3 certificates made here, for the API's mutual TLS: a CA, the
// machine's server certificate, and the clients' certificates whose Organization is
// their role. node:crypto makes keys and signs, but cannot build a certificate, so the
// TBSCertificate is encoded by hand (der.ts) and signed with the issuer's key
// (ECDSA P-256 with SHA-256, or Ed25519). Reading certificates is X509Certificate's job.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject }
  from 'node:crypto';
import {
  bitString, boolean, children, explicit, ia5String, implicitPrimitive, octetString, oid, readElement, sequence, set,
  smallInteger, time, unsignedInteger, utf8String,
} from './der.ts';
import { ipFamily, ipv6Groups } from '../sys/ip-literal.ts';

export type KeyAlgorithm = 'ecdsa-p256' | 'ed25519';

export interface Subject { commonName: string; organization?: readonly string[] }

export type Usage = 'ca' | 'server' | 'client';

export interface Issuer {
  /** The issuer's certificate (PEM), whose subject becomes the issuer name. */
  certificate: string;
  key: KeyObject;
}

export interface CertificateOptions {
  subject: Subject;
  /** The key the certificate is for (its public half is certified). */
  publicKey: KeyObject;
  /** Who signs; absent: self-signed with `selfKey`. */
  issuer?: Issuer;
  /** The private key of a self-signed certificate. */
  selfKey?: KeyObject;
  usage: Usage;
  notBefore: Date;
  notAfter: Date;
  /** Subject alternative names of a server certificate: DNS names and IP addresses. */
  names?: readonly string[];
}

const OID = {
  commonName: '2.5.4.3', organization: '2.5.4.10',
  ecPublicKey: '1.2.840.10045.2.1', ecdsaSha256: '1.2.840.10045.4.3.2', ed25519: '1.3.101.112',
  basicConstraints: '2.5.29.19', keyUsage: '2.5.29.15', extKeyUsage: '2.5.29.37', subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14', authorityKeyId: '2.5.29.35', serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

export function generateKey(algorithm: KeyAlgorithm = 'ecdsa-p256'): KeyObject {
  return algorithm === 'ed25519'
    ? generateKeyPairSync('ed25519').privateKey
    : generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
}

export const keyToPem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }).toString();

/** Organization(s) first, then the common name, each its own RDN (as openssl prints "O = x, CN = y"). */
function encodeName(s: Subject): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(...(s.organization ?? []).map((o) => rdn(OID.organization, o)), rdn(OID.commonName, s.commonName));
}

function signatureAlgorithm(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === 'ed25519') return sequence(oid(OID.ed25519));
  if (key.asymmetricKeyType === 'ec') return sequence(oid(OID.ecdsaSha256));
  throw new Error(`signing with a ${key.asymmetricKeyType} key is not supported (ECDSA P-256 or Ed25519)`);
}

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const [, bits] = children(spki, readElement(spki));
  return createHash('sha1').update(spki.subarray(bits!.contentStart + 1, bits!.end)).digest();
}

/** The issuer certificate's subject exactly as it encoded it (a name is compared as encoded). */
function subjectBytes(certPem: string): Buffer {
  const der = new X509Certificate(certPem).raw;
  const tbs = children(der, readElement(der))[0]!;
  const fields = children(der, tbs);
  // version [0], serial, signature, issuer, validity, subject
  const subject = fields[fields[0]!.tag === 0xa0 ? 5 : 4]!;
  return der.subarray(subject.start, subject.end);
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

function generalName(name: string): Buffer {
  const family = ipFamily(name);
  if (!family) return implicitPrimitive(2, Buffer.from(name, 'ascii'));
  if (family === 4) return implicitPrimitive(7, Buffer.from(name.split('.').map(Number)));
  const out = Buffer.alloc(16);
  ipv6Groups(name)!.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return implicitPrimitive(7, out);
}

/** A certificate (PEM) as the options say, signed by the issuer (or by itself). */
export function issueCertificate(o: CertificateOptions): string {
  const signer = o.issuer?.key ?? o.selfKey;
  if (!signer) throw new Error('a certificate needs an issuer or, self-signed, its own private key');
  const issuerName = o.issuer ? subjectBytes(o.issuer.certificate) : encodeName(o.subject);
  const issuerPublic = o.issuer ? new X509Certificate(o.issuer.certificate).publicKey : createPublicKey(signer);
  const spki = o.publicKey.export({ type: 'spki', format: 'der' });
  const keyUsage = o.usage === 'ca'
    ? bitString(Buffer.from([0x06]), 1) // keyCertSign, cRLSign
    : bitString(Buffer.from([0x80]), 7); // digitalSignature
  const exts = [
    extension(OID.basicConstraints, true, o.usage === 'ca' ? sequence(boolean(true), smallInteger(0)) : sequence()),
    extension(OID.keyUsage, true, keyUsage),
    ...(o.usage === 'ca' ? [] : [extension(OID.extKeyUsage, false,
      sequence(oid(o.usage === 'server' ? OID.serverAuth : OID.clientAuth)))]),
    extension(OID.subjectKeyId, false, octetString(keyIdentifier(o.publicKey))),
    extension(OID.authorityKeyId, false, sequence(implicitPrimitive(0, keyIdentifier(issuerPublic)))),
    ...(o.names?.length ? [extension(OID.subjectAltName, false, sequence(...o.names.map(generalName)))] : []),
  ];
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // positive, at most 20 octets (RFC 5280 4.1.2.2)
  const tbs = sequence(
    explicit(0, smallInteger(2)), unsignedInteger(serial), signatureAlgorithm(signer), issuerName,
    sequence(time(o.notBefore), time(o.notAfter)), encodeName(o.subject), spki, explicit(3, sequence(...exts)),
  );
  const signature = sign(signer.asymmetricKeyType === 'ed25519' ? null : 'sha256', tbs, signer);
  const der = sequence(tbs, signatureAlgorithm(signer), bitString(signature));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/** "O=admin\nCN=cosictl" (X509Certificate.subject) -> its parts. */
export function parseSubject(text: string): Subject {
  const organization: string[] = [];
  let commonName = '';
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1);
    if (key === 'O') organization.push(value);
    else if (key === 'CN') commonName = value;
  }
  return { commonName, organization };
}

/** SHA-256 fingerprint as openssl prints it (AA:BB:...), the form shown on the console. */
export const fingerprint = (certPem: string) => new X509Certificate(certPem).fingerprint256;
