// upgrade-bundle: the one file an upgrade consumes. A POSIX tar (ustar), so `tar -tvf` shows
// what is inside, whose members come in this order:
//   manifest.json       kind, version, commit, command line, signing key id, each part's size and sha256
//   manifest.sig        the Ed25519 signature (64 bytes) over manifest.json's exact bytes
//   vmlinuz, initramfs.cpio.zst   the parts, in the manifest's order
// A reader checks the signature against a key it trusts before it believes the manifest, and
// each part against the manifest before it uses the part; manifest and signature come first so
// that a reader streaming the bundle knows what to expect before the parts arrive.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export const UPGRADE_KIND = 'appliance-upgrade/v1';
export const MANIFEST_MEMBER = 'manifest.json';
export const SIGNATURE_MEMBER = 'manifest.sig';

export interface UpgradePart { name: string; size: number; sha256: string }

export interface UpgradeManifest {
  kind: typeof UPGRADE_KIND;
  version: string;
  commit: string;
  /** The command line the upgraded slot boots with. */
  cmdline: string;
  /** sha256 of the signing public key (SPKI DER), so a reader can say which key signed it. */
  keyId: string;
  parts: UpgradePart[];
}

export class UpgradeBundleError extends Error {
  constructor(message: string, readonly member?: string) { super(member ? `${member}: ${message}` : message); }
}

const BLOCK = 512;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** sha256 of the public key's SPKI DER, as `sha256:<hex>`. */
export function keyIdOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return `sha256:${sha256(pub.export({ type: 'spki', format: 'der' }))}`;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** One ustar header: regular file, root-owned, mode 0644, the given time. */
export function tarHeader(name: string, size: number, mtime: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new UpgradeBundleError('name longer than 100 bytes', name);
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 'utf8');
  h.write(octal(0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(mtime, 12), 136, 'latin1');
  h.write('        ', 148, 'latin1'); // the checksum counts itself as spaces
  h.write('0', 156, 'latin1');
  h.write('ustar\0' + '00', 257, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'latin1');
  return h;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

export interface BundleInput {
  version: string;
  commit: string;
  cmdline: string;
  parts: { name: string; data: Buffer }[];
  privateKey: KeyObject;
  mtime: number;
}

/** The bundle's bytes: manifest, signature, parts, and tar's two zero blocks. */
export function encodeUpgradeBundle(i: BundleInput): Buffer {
  if (i.privateKey.asymmetricKeyType !== 'ed25519') {
    const type = i.privateKey.asymmetricKeyType ?? 'not a private key';
    throw new UpgradeBundleError(`the signing key is ${type}, not ed25519`);
  }
  const manifest: UpgradeManifest = {
    kind: UPGRADE_KIND, version: i.version, commit: i.commit, cmdline: i.cmdline, keyId: keyIdOf(i.privateKey),
    parts: i.parts.map((p) => ({ name: p.name, size: p.data.length, sha256: sha256(p.data) })),
  };
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + '\n');
  const members = [
    { name: MANIFEST_MEMBER, data: manifestBytes },
    { name: SIGNATURE_MEMBER, data: sign(null, manifestBytes, i.privateKey) },
    ...i.parts,
  ];
  return Buffer.concat([
    ...members.flatMap((m) => [tarHeader(m.name, m.data.length, i.mtime), m.data, padding(m.data.length)]),
    Buffer.alloc(2 * BLOCK),
  ]);
}

/**
 * The members of a ustar archive, in order; refuses a header whose checksum is wrong, and an archive
 * that ends before its end-of-archive block (a download cut short at a member's end is caught too).
 */
export function parseTar(b: Buffer): { name: string; data: Buffer }[] {
  const out: { name: string; data: Buffer }[] = [];
  for (let at = 0; ;) {
    if (at + BLOCK > b.length) {
      throw new UpgradeBundleError(`the archive ends at byte ${b.length}, before its end-of-archive block `
        + '(truncated?)');
    }
    const h = b.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) break;
    const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const stored = parseInt(h.toString('latin1', 148, 156).replace(/[\0 ]+$/, ''), 8);
    let sum = 0;
    for (let k = 0; k < BLOCK; k++) sum += k >= 148 && k < 156 ? 0x20 : h[k]!;
    if (sum !== stored) {
      throw new UpgradeBundleError(`tar header checksum ${stored}, computed ${sum} (not a bundle, or damaged)`,
        name || `offset ${at}`);
    }
    const size = parseInt(h.toString('latin1', 124, 136).replace(/[\0 ]+$/, ''), 8);
    if (!Number.isSafeInteger(size) || at + BLOCK + size > b.length) {
      throw new UpgradeBundleError(`size ${size} runs past the end of the file (truncated?)`, name);
    }
    out.push({ name, data: b.subarray(at + BLOCK, at + BLOCK + size) });
    at += BLOCK + size + padding(size).length;
  }
  return out;
}

export interface VerifiedBundle { manifest: UpgradeManifest; parts: Map<string, Buffer> }

/**
 * Checks a bundle against a trusted public key: the signature over the manifest first, then every
 * part against the manifest. Any mismatch throws, naming the member.
 */
export function verifyUpgradeBundle(bundle: Buffer, trusted: KeyObject): VerifiedBundle {
  const members = parseTar(bundle);
  const [m, s] = members;
  if (m?.name !== MANIFEST_MEMBER || s?.name !== SIGNATURE_MEMBER) {
    throw new UpgradeBundleError(`expected ${MANIFEST_MEMBER} then ${SIGNATURE_MEMBER} first, found `
      + `${members.slice(0, 2).map((x) => x.name).join(', ') || 'nothing'}`);
  }
  if (!verify(null, m.data, trusted, s.data)) {
    let signer = 'unknown';
    try { signer = (JSON.parse(m.data.toString()) as { keyId?: string }).keyId ?? signer; } catch (e) {
      signer = `unreadable (${(e as Error).message})`;
    }
    throw new UpgradeBundleError(`the signature does not verify with key ${keyIdOf(trusted)} (the manifest names `
      + `${signer}): signed by another key, or altered`, SIGNATURE_MEMBER);
  }
  const manifest = JSON.parse(m.data.toString()) as UpgradeManifest;
  if (manifest.kind !== UPGRADE_KIND) {
    throw new UpgradeBundleError(`kind "${manifest.kind}", not ${UPGRADE_KIND}`, MANIFEST_MEMBER);
  }
  const parts = new Map(members.slice(2).map((x) => [x.name, x.data]));
  for (const p of manifest.parts) {
    const data = parts.get(p.name);
    if (!data) throw new UpgradeBundleError('listed in the manifest, missing from the bundle', p.name);
    if (data.length !== p.size) {
      throw new UpgradeBundleError(`${data.length} bytes, the manifest says ${p.size}`, p.name);
    }
    const got = sha256(data);
    if (got !== p.sha256) throw new UpgradeBundleError(`sha256 ${got}, the manifest says ${p.sha256}`, p.name);
  }
  const extra = [...parts.keys()].filter((n) => !manifest.parts.some((p) => p.name === n));
  if (extra.length) throw new UpgradeBundleError(`members the manifest does not list: ${extra.join(', ')}`);
  return { manifest, parts };
}
