// signing-key: the Ed25519 key that signs upgrade bundles. A release passes its own
// (`npm run image -- --signing-key FILE`, PKCS#8 PEM, e.g. `openssl genpkey -algorithm ed25519`);
// otherwise a development key is made once in out/dev/ and reused, so that development builds
// of the same inputs sign alike (Ed25519 signatures are deterministic).
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { keyIdOf } from '../machinery/disk/upgrade-bundle.ts';
import type { SigningKey } from './formats/format.ts';

export class SigningKeyError extends Error {
  constructor(message: string, readonly file: string, options?: ErrorOptions) { super(`${file}: ${message}`, options); }
}

export function loadSigningKey(file: string, what = 'signing key'): SigningKey {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SigningKeyError(`cannot read the ${what}: ${(e as Error).message}`, file, { cause: e });
  }
  let key;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    throw new SigningKeyError(`not a PEM private key (${(e as Error).message})`, file, { cause: e });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new SigningKeyError(`a ${key.asymmetricKeyType} key; upgrade bundles are signed with ed25519 `
      + '(openssl genpkey -algorithm ed25519 -out FILE)', file);
  }
  return { privateKey: key, description: `${what} ${file} (${keyIdOf(key)})` };
}

/** The development key at `file`, made (mode 0600) when it is not there yet. */
export function developmentSigningKey(file: string): SigningKey {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  return loadSigningKey(file, 'the development key (not for releases: pass --signing-key)');
}
