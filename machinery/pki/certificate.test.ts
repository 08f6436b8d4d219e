// The certificates we make, checked by tools that did not make them: openssl reads and
// verifies the chain, and node's TLS (OpenSSL underneath) completes a mutual handshake.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { createServer, connect, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fingerprint, generateKey, issueCertificate, keyToPem, parseSubject, type KeyAlgorithm,
} from './certificate.ts';

const dir = mkdtempSync(join(tmpdir(), 'pki-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const now = new Date();
const later = new Date(now.getTime() + 3600_000);

function chain(alg: KeyAlgorithm) {
  const caKey = generateKey(alg);
  const ca = issueCertificate({
    subject: { commonName: 'test CA', organization: ['appliance'] }, publicKey: createPublicKey(caKey), selfKey: caKey,
    usage: 'ca', notBefore: now, notAfter: later,
  });
  const serverKey = generateKey(alg);
  const server = issueCertificate({
    subject: { commonName: 'machine' }, publicKey: createPublicKey(serverKey), issuer: { certificate: ca, key: caKey },
    usage: 'server', notBefore: now, notAfter: later, names: ['node1.example.test', '10.0.2.15', 'fd00::15', '::1'],
  });
  const clientKey = generateKey(alg);
  const client = issueCertificate({
    subject: { commonName: 'alice', organization: ['operator'] }, publicKey: createPublicKey(clientKey),
    issuer: { certificate: ca, key: caKey }, usage: 'client', notBefore: now, notAfter: later,
  });
  return { ca, caKey, server, serverKey, client, clientKey };
}

for (const alg of ['ecdsa-p256', 'ed25519'] as const) {
  t.test(`${alg}: openssl verifies the chain and reads every extension`, async (t) => {
    const c = chain(alg);
    const ca = file(`${alg}-ca.pem`, c.ca);
    const leaves = [['server', c.server, 'sslserver'], ['client', c.client, 'sslclient']] as const;
    for (const [name, pem, purpose] of leaves) {
      const out = execFileSync('openssl',
        ['verify', '-CAfile', ca, '-purpose', purpose, file(`${alg}-${name}.pem`, pem)], { encoding: 'utf8' });
      t.match(out, /: OK/, `${name} certificate verifies for ${purpose}`);
    }
    const text = execFileSync('openssl', ['x509', '-noout', '-text', '-in', file(`${alg}-s.pem`, c.server)],
      { encoding: 'utf8' });
    t.match(text, /DNS:node1\.example\.test, IP Address:10\.0\.2\.15, /);
    t.match(text, /IP Address:FD00:0:0:0:0:0:0:15, IP Address:0:0:0:0:0:0:0:1/);
    t.match(text, /TLS Web Server Authentication/);
    t.match(text, /Subject Key Identifier/);
    t.match(text, /Authority Key Identifier/);
    const caText = execFileSync('openssl', ['x509', '-noout', '-text', '-in', ca], { encoding: 'utf8' });
    t.match(caText, /CA:TRUE, pathlen:0/);
    t.match(caText, /Certificate Sign, CRL Sign/);
    t.same(parseSubject(new X509Certificate(c.client).subject), { commonName: 'alice', organization: ['operator'] });
    t.ok(new X509Certificate(c.server).checkIssued(new X509Certificate(c.ca)), 'node agrees the CA issued it');
    t.match(fingerprint(c.ca), /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  t.test(`${alg}: a mutual TLS handshake with node's TLS`, async (t) => {
    const c = chain(alg);
    const server = createServer({
      cert: c.server, key: keyToPem(c.serverKey), ca: c.ca, requestCert: true, rejectUnauthorized: true,
    }, (s) => { s.end(new X509Certificate(s.getPeerCertificate(true).raw).subject); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => server.close());
    const port = (server.address() as { port: number }).port;
    const peer = await new Promise<string>((resolve, reject) => {
      const s: TLSSocket = connect({
        host: '127.0.0.1', port, ca: c.ca, cert: c.client, key: keyToPem(c.clientKey), servername: 'node1.example.test',
      }, () => {
        let got = '';
        s.on('data', (d) => {
          got += d;
        });
        s.on('end', () => resolve(got));
      });
      s.on('error', reject);
    });
    t.match(peer, /O=operator\nCN=alice/, 'the server read the client certificate');
    // A client with a certificate from another CA is refused by the handshake itself.
    const other = chain(alg);
    const refused = await new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.1', port, ca: c.ca, cert: other.client, key: keyToPem(other.clientKey),
        servername: 'node1.example.test' }, () => s.once('data', () => resolve('accepted')));
      s.on('error', (e) => resolve(e.message));
      s.on('end', () => resolve('ended'));
    });
    t.not(refused, 'accepted', `a foreign client certificate is refused (${refused})`);
  });
}
