// upgrade-bundle: what tar makes of it, that the same input and key give the same bytes, and
// that every alteration is refused, naming the member: a part changed, the manifest changed,
// another key, a truncated file, members out of order or added.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BundleReader, encodeUpgradeBundle, keyIdOf, parseTar, tarHeader, verifyUpgradeBundle, type BundleInput,
} from './upgrade-bundle.ts';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const input: BundleInput = {
  version: '1.2.3', commit: 'abc', cmdline: 'console=ttyS0', privateKey, mtime: 86400,
  parts: [
    { name: 'vmlinuz', data: Buffer.from('kernel bytes') }, { name: 'initramfs.cpio.zst', data: Buffer.alloc(1000, 7) },
  ],
};
const bundle = encodeUpgradeBundle(input);

t.test('GNU tar lists and extracts it; the same input and key give the same bytes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  writeFileSync(join(dir, 'b.tar'), bundle);
  t.match(execFileSync('tar', ['-tvf', join(dir, 'b.tar')], { encoding: 'utf8' }),
    /-rw-r--r-- 0\/0 +\d+ 1970-01-02 00:00 manifest\.json\n.*manifest\.sig\n.*12 1970-01-02 00:00 vmlinuz\n.*1000 /);
  execFileSync('tar', ['-xf', join(dir, 'b.tar'), '-C', dir, 'vmlinuz']);
  t.same(execFileSync('cat', [join(dir, 'vmlinuz')], { encoding: 'utf8' }), 'kernel bytes');
  t.same(encodeUpgradeBundle(input), bundle);
  t.equal(bundle.length % 512, 0);
});

t.test('verifies with the signer\'s public key; the manifest lists each part', async (t) => {
  const v = verifyUpgradeBundle(bundle, publicKey);
  t.match(v.manifest, { kind: 'appliance-upgrade/v1', version: '1.2.3', commit: 'abc', keyId: keyIdOf(publicKey) });
  t.same(v.manifest.parts.map((p) => [p.name, p.size]), [['vmlinuz', 12], ['initramfs.cpio.zst', 1000]]);
  t.equal(v.parts.get('vmlinuz')?.toString(), 'kernel bytes');
  t.equal(keyIdOf(privateKey), keyIdOf(publicKey), 'a key and its public half have one id');
});

t.test('every alteration is refused, naming what is wrong', async (t) => {
  const members = parseTar(bundle);
  type Member = { name: string; data: Buffer };
  const rebuild = (edit: (m: Member[]) => Member[]) => Buffer.concat([
    ...edit(members.map((m) => ({ ...m, data: Buffer.from(m.data) }))).flatMap((m) => [
      tarHeader(m.name, m.data.length, 0), m.data, Buffer.alloc((512 - (m.data.length % 512)) % 512)]),
    Buffer.alloc(1024),
  ]);
  const kernelChanged = rebuild((m) => {
    m[2]!.data[0] = 0x4b ^ 1;
    return m;
  });
  t.throws(() => verifyUpgradeBundle(kernelChanged, publicKey), /^vmlinuz: sha256 \w+, the manifest says \w+/);
  const manifestChanged = rebuild((m) => {
    m[0]!.data = Buffer.from(m[0]!.data.toString().replace('1.2.3', '9.9.9'));
    return m;
  });
  t.throws(() => verifyUpgradeBundle(manifestChanged, publicKey), /manifest\.sig: the signature does not verify/);
  t.throws(() => verifyUpgradeBundle(bundle, generateKeyPairSync('ed25519').publicKey),
    new RegExp(`does not verify with key sha256:\\w+ \\(the manifest names ${keyIdOf(publicKey)}\\)`));
  const cut = (n: number) => verifyUpgradeBundle(bundle.subarray(0, n), publicKey);
  t.throws(() => cut(bundle.length - 1124),
    /before its end-of-archive block \(truncated\?\) in initramfs\.cpio\.zst, 76 bytes short/);
  t.throws(() => cut(1500), /ends at byte 1500, before its end-of-archive/);
  t.throws(() => cut(bundle.length - 1024), /end-of-archive block/, 'cut at a member\'s end');
  t.throws(() => verifyUpgradeBundle(rebuild((m) => [m[1]!, m[0]!, m[2]!, m[3]!]), publicKey),
    /expected manifest\.json then manifest\.sig first, found manifest\.sig as member 1/);
  t.throws(() => verifyUpgradeBundle(rebuild((m) => [...m, { name: 'extra', data: Buffer.from('x') }]), publicKey),
    /extra: a member the manifest does not list/);
  t.throws(() => verifyUpgradeBundle(rebuild((m) => m.slice(0, 3)), publicKey),
    /initramfs\.cpio\.zst: listed in the manifest, missing from the bundle/);
  const garbage = Buffer.from(bundle);
  garbage[0] = 0x58;
  t.throws(() => verifyUpgradeBundle(garbage, publicKey), /tar header checksum \d+, computed \d+/);
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  t.throws(() => encodeUpgradeBundle({ ...input, privateKey: ec }),
    /the signing key is ec, not ed25519/);
});

t.test('read as it arrives: any chunking; the manifest is judged before the first byte of a part', async (t) => {
  for (const size of [1, 7, 511, 512, 513, 4096]) {
    const events: string[] = [];
    const r = new BundleReader([generateKeyPairSync('ed25519').publicKey, publicKey], {
      manifest: (m) => { events.push(`manifest ${m.version}`); },
      part: (p, d) => {
        if (events.at(-1) !== p.name) events.push(p.name);
        void d;
      },
    });
    for (let at = 0; at < bundle.length; at += size) r.push(bundle.subarray(at, at + size));
    t.same(events, ['manifest 1.2.3', 'vmlinuz', 'initramfs.cpio.zst'], `chunks of ${size}`);
    t.equal(r.finish().keyId, keyIdOf(publicKey), 'the key that verified, among those trusted');
  }
  const refused = new BundleReader([publicKey], {
    manifest: (m) => { throw new Error(`version ${m.version} is below the minimum 2.0.0`); },
    part: () => { t.fail('no part may pass a refused manifest'); },
  });
  t.throws(() => refused.push(bundle), /below the minimum/);
  const none = new BundleReader([]);
  t.throws(() => none.push(bundle), /does not verify with key no key at all/);
  const padded = new BundleReader([publicKey]);
  padded.push(Buffer.concat([bundle, Buffer.alloc(8192)]));
  t.ok(padded.complete, 'zero records after the end (tar pads to 10 KiB) are fine');
  t.throws(() => padded.push(Buffer.from('x')), /bytes after the end-of-archive block/);
});
