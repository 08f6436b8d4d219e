// tuf-keys: the Ed25519 keys an update repository's roles sign with, as PKCS#8 PEM files in key folders kept off
// the published repository (one folder per person or machine that holds keys: a root key offline, the timestamp key
// on the host that refreshes it). A key's TUF id is the sha256 of its public half's canonical JSON, as the TUF
// specification defines it; @tufjs/models' Key carries it.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize } from '@tufjs/canonical-json';
import { Key, Signature } from '@tufjs/models';

/** A refusal of the publisher's input: the message names the file or key and why. */
export class ReleaseRefused extends Error {}

export interface SigningKeyFile {
  id: string;
  key: Key;
  privateKey: KeyObject;
  file: string;
}

/** The TUF key of an Ed25519 public (or private) key: keyval.public is the raw 32 bytes in hex. */
export function tufKeyOf(k: KeyObject): Key {
  const pub = k.type === 'private' ? createPublicKey(k) : k;
  const raw = pub.export({ type: 'spki', format: 'der' }).subarray(-32);
  const fields = { keytype: 'ed25519', scheme: 'ed25519', keyval: { public: raw.toString('hex') } };
  const keyID = createHash('sha256').update(canonicalize(fields)).digest('hex');
  return new Key({ keyID, keyType: fields.keytype, scheme: fields.scheme, keyVal: fields.keyval });
}

/** The public key a TUF Ed25519 key holds (its raw 32 bytes in hex, as tufKeyOf writes them). */
export function publicKeyOf(k: Key): KeyObject {
  // An Ed25519 SubjectPublicKeyInfo is this fixed 12-byte header and then the raw key (RFC 8410).
  const header = Buffer.from('302a300506032b6570032100', 'hex');
  return createPublicKey({ key: Buffer.concat([header, Buffer.from(k.keyVal.public!, 'hex')]), format: 'der',
    type: 'spki' });
}

/** Signs metadata bytes (the canonical JSON @tufjs/models hands over) with one key. */
export const signerOf = (k: SigningKeyFile) => (data: Buffer) =>
  new Signature({ keyID: k.id, sig: sign(null, data, k.privateKey).toString('hex') });

function readKey(file: string): SigningKeyFile {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ReleaseRefused(`${file}: not a PEM private key (${(e as Error).message})`, { cause: e });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new ReleaseRefused(`${file}: a ${privateKey.asymmetricKeyType} key; TUF roles here sign with ed25519`);
  }
  const key = tufKeyOf(privateKey);
  return { id: key.keyID, key, privateKey, file };
}

/** Every key in the folders (`*.pem`), by TUF key id. */
export function loadKeyFolders(dirs: readonly string[]): Map<string, SigningKeyFile> {
  const keys = new Map<string, SigningKeyFile>();
  for (const dir of dirs) {
    if (!existsSync(dir)) throw new ReleaseRefused(`${dir}: no such key folder`);
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.pem')).sort()) {
      const k = readKey(join(dir, f));
      keys.set(k.id, k);
    }
  }
  return keys;
}

/** A new key written as DIR/NAME.pem (0600; refused rather than overwritten). */
export function generateKeyFile(dir: string, name: string): SigningKeyFile {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${name}.pem`);
  if (existsSync(file)) throw new ReleaseRefused(`${file} exists: a key is never overwritten`);
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  return readKey(file);
}
