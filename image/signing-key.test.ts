// signing-key: a release key read from PEM, errors that name the file and say what is wrong, and
// the development key made once (0600) and then reused.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf } from '../machinery/disk/upgrade-bundle.ts';
import { developmentSigningKey, loadSigningKey } from './signing-key.ts';

const dir = mkdtempSync(join(tmpdir(), 'signing-key-'));

t.test('a release key; the wrong kinds of file are refused by name', async (t) => {
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(dir, 'release.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const k = loadSigningKey(join(dir, 'release.pem'));
  t.equal(keyIdOf(k.privateKey), keyIdOf(privateKey));
  t.match(k.description, /release\.pem \(sha256:[0-9a-f]{64}\)/);
  t.throws(() => loadSigningKey(join(dir, 'missing.pem')), /missing\.pem: cannot read the signing key: ENOENT/);
  writeFileSync(join(dir, 'text.pem'), 'not a key');
  t.throws(() => loadSigningKey(join(dir, 'text.pem')), /text\.pem: not a PEM private key/);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
  writeFileSync(join(dir, 'rsa.pem'), rsa.export({ type: 'pkcs8', format: 'pem' }));
  t.throws(() => loadSigningKey(join(dir, 'rsa.pem')), /rsa\.pem: a rsa key; upgrade bundles are signed with ed25519/);
});

t.test('the development key is made once, private, and reused', async (t) => {
  const file = join(dir, 'dev', 'upgrade-signing-key.pem');
  const first = developmentSigningKey(file);
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(keyIdOf(developmentSigningKey(file).privateKey), keyIdOf(first.privateKey));
  t.match(first.description, /development key \(not for releases/);
});
