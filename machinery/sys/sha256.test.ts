// sha256: the digest node:crypto (OpenSSL) gives, for every length around the 64-byte blocks and the padding's
// edges, a megabyte (a config's limit), and UTF-8 text; and FIPS 180-4's own examples.
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { sha256Hex } from './sha256.ts';

const openssl = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

t.test('FIPS 180-4 examples', async (t) => {
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.equal(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  t.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

t.test('as node:crypto for every length from 0 to 200 bytes, and a megabyte', async (t) => {
  for (let n = 0; n <= 200; n++) {
    const b = randomBytes(n);
    if (sha256Hex(b) !== openssl(b)) t.fail(`${n} bytes: ${b.toString('hex')}`);
  }
  const mib = randomBytes(1 << 20);
  t.equal(sha256Hex(mib), openssl(mib), '1 MiB');
  t.equal(sha256Hex(new Uint8Array(mib.buffer, mib.byteOffset + 3, 1000)), openssl(mib.subarray(3, 1003)),
    'a view into a larger buffer');
});

t.test('a string is hashed as UTF-8', async (t) => {
  const text = 'hostname: grüße-📦\n'.repeat(9);
  t.equal(sha256Hex(text), openssl(Buffer.from(text, 'utf8')));
});
