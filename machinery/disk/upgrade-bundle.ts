// upgrade-bundle: the one file an upgrade consumes. A POSIX tar (ustar), so `tar -tvf` shows
// what is inside, whose members come in this order:
//   manifest.json       kind, version, commit, command line, signing key id, each part's size and sha256
//   manifest.sig        the Ed25519 signature (64 bytes) over manifest.json's exact bytes
//   vmlinuz, initramfs.cpio.zst   the parts, in the manifest's order
// A reader checks the signature against a key it trusts before it believes the manifest, and
// each part against the manifest before it uses the part; manifest and signature come first so
// that a reader streaming the bundle knows what to expect before the parts arrive.
import { createHash, createPublicKey, sign, verify, type Hash, type KeyObject } from 'node:crypto';
import { encodeTar, readTarHeader, TAR_BLOCK as BLOCK, tarPadding as padding } from './tar.ts';

export { parseTar, tarHeader } from './tar.ts';

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

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** sha256 of the public key's SPKI DER, as `sha256:<hex>`. */
export function keyIdOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return `sha256:${sha256(pub.export({ type: 'spki', format: 'der' }))}`;
}


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
  return encodeTar(members, i.mtime);
}

/** How large a manifest may be: a few parts' names and hashes fit in far less. */
const MAX_MANIFEST = 64 << 10;

/** Checks a manifest's bytes against its signature and the trusted keys; the key that signed it, or throws. */
function checkSignature(manifest: Buffer, signature: Buffer, trusted: readonly KeyObject[]): UpgradeManifest {
  const signer = trusted.find((k) => verify(null, manifest, k, signature));
  if (!signer) {
    let named = 'unknown';
    try {
      named = (JSON.parse(manifest.toString()) as { keyId?: string }).keyId ?? named;
    } catch (e) {
      named = `unreadable (${(e as Error).message})`;
    }
    const keys = trusted.length ? trusted.map(keyIdOf).join(', ') : 'no key at all';
    throw new UpgradeBundleError(`the signature does not verify with key ${keys} (the manifest names ${named}): `
      + 'signed by another key, or altered', SIGNATURE_MEMBER);
  }
  let m: UpgradeManifest;
  try {
    m = JSON.parse(manifest.toString()) as UpgradeManifest;
  } catch (e) {
    throw new UpgradeBundleError(`signed, but not JSON: ${(e as Error).message}`, MANIFEST_MEMBER);
  }
  if (m.kind !== UPGRADE_KIND) throw new UpgradeBundleError(`kind "${m.kind}", not ${UPGRADE_KIND}`, MANIFEST_MEMBER);
  const parts = Array.isArray(m.parts) ? m.parts : [];
  if (!parts.length || parts.some((p) => typeof p?.name !== 'string' || !Number.isSafeInteger(p.size) || p.size < 0
    || !/^[0-9a-f]{64}$/.test(String(p.sha256)))) {
    throw new UpgradeBundleError('parts: each needs a name, a size and a sha256', MANIFEST_MEMBER);
  }
  return { ...m, keyId: keyIdOf(signer) };
}

interface Member { name: string; size: number; left: number; padding: number; data?: Buffer[]; hash?: Hash }

/**
 * A bundle read as it arrives (an upload's chunks, a download's): the signature is checked as soon as the
 * manifest and its signature are in, before any part, so that a bundle from another key is refused before
 * its parts are written anywhere; each part is hashed as it passes and checked at its end. push() throws
 * an UpgradeBundleError naming the member at the first problem; finish() throws unless the archive ended.
 */
export class BundleReader {
  /** Bytes pushed so far. */
  received = 0;
  manifest: UpgradeManifest | undefined;
  private header = Buffer.alloc(0);
  private member: Member | undefined;
  private members = 0;
  private manifestBytes: Buffer | undefined;
  private ended = false;

  constructor(
    private readonly trusted: readonly KeyObject[],
    private readonly hooks: {
      /** The manifest verified: throw to refuse it (a version policy). */
      manifest?(m: UpgradeManifest): void;
      /** A part's bytes, in order; its sha256 is checked when its last bytes have passed. */
      part?(p: UpgradePart, data: Buffer): void;
    } = {},
  ) {}

  get complete(): boolean { return this.ended; }

  push(chunk: Buffer): void {
    this.received += chunk.length;
    let at = 0;
    while (at < chunk.length) {
      if (this.ended) {
        if (chunk.subarray(at).some((b) => b !== 0)) {
          throw new UpgradeBundleError(`bytes after the end-of-archive block (at byte ${this.received})`);
        }
        return;
      }
      const m = this.member;
      if (!m) {
        const take = Math.min(BLOCK - this.header.length, chunk.length - at);
        this.header = Buffer.concat([this.header, chunk.subarray(at, at + take)]);
        at += take;
        if (this.header.length === BLOCK) {
          this.startMember(this.header);
          this.header = Buffer.alloc(0);
        }
        continue;
      }
      if (m.left > 0) {
        const data = chunk.subarray(at, at + Math.min(m.left, chunk.length - at));
        at += data.length;
        m.left -= data.length;
        if (m.data) m.data.push(data);
        else {
          m.hash!.update(data);
          this.hooks.part?.(this.partOf(m.name), data);
        }
        if (m.left > 0) continue;
      }
      const pad = Math.min(m.padding, chunk.length - at);
      at += pad;
      m.padding -= pad;
      if (m.left === 0 && m.padding === 0) {
        this.member = undefined;
        this.endMember(m);
      }
    }
  }

  /** The verified manifest, once the whole archive has arrived; throws otherwise. */
  finish(): UpgradeManifest {
    if (!this.ended) {
      throw new UpgradeBundleError(`the archive ends at byte ${this.received}, before its end-of-archive block `
        + `(truncated?)${this.member ? ` in ${this.member.name}, ${this.member.left} bytes short` : ''}`);
    }
    return this.manifest!;
  }

  private partOf(name: string): UpgradePart { return this.manifest!.parts.find((p) => p.name === name)!; }

  private startMember(h: Buffer): void {
    if (h.every((x) => x === 0)) {
      const listed = this.manifest?.parts.length ?? 0;
      if (this.members < 2 + listed) {
        const missing = this.members < 2 ? [MANIFEST_MEMBER, SIGNATURE_MEMBER][this.members]!
          : this.manifest!.parts[this.members - 2]!.name;
        throw new UpgradeBundleError('listed in the manifest, missing from the bundle', missing);
      }
      this.ended = true;
      return;
    }
    const { name, size } = readTarHeader(h, this.received);
    const index = this.members++;
    const expected = index === 0 ? MANIFEST_MEMBER : index === 1 ? SIGNATURE_MEMBER
      : this.manifest!.parts[index - 2]?.name;
    if (index < 2 && name !== expected) {
      throw new UpgradeBundleError(`expected ${MANIFEST_MEMBER} then ${SIGNATURE_MEMBER} first, found ${name} `
        + `as member ${index + 1}`);
    }
    if (expected === undefined) throw new UpgradeBundleError('a member the manifest does not list', name);
    if (name !== expected) {
      throw new UpgradeBundleError(`found where the manifest lists ${expected} (out of order, or not listed)`, name);
    }
    if (index === 0 && size > MAX_MANIFEST) throw new UpgradeBundleError(`${size} bytes: too large`, name);
    if (index === 1 && size !== 64) throw new UpgradeBundleError(`${size} bytes; an Ed25519 signature is 64`, name);
    if (index >= 2 && size !== this.partOf(name).size) {
      throw new UpgradeBundleError(`${size} bytes, the manifest says ${this.partOf(name).size}`, name);
    }
    const member: Member = { name, size, left: size, padding: padding(size).length };
    if (index < 2) member.data = [];
    else member.hash = createHash('sha256');
    this.member = member;
    if (size === 0 && member.padding === 0) {
      this.member = undefined;
      this.endMember(member);
    }
  }

  private endMember(m: Member): void {
    if (m.name === MANIFEST_MEMBER && !this.manifestBytes) {
      this.manifestBytes = Buffer.concat(m.data!);
      return;
    }
    if (m.name === SIGNATURE_MEMBER && this.manifestBytes) {
      this.manifest = checkSignature(this.manifestBytes, Buffer.concat(m.data!), this.trusted);
      this.hooks.manifest?.(this.manifest);
      return;
    }
    const want = this.partOf(m.name).sha256;
    const got = m.hash!.digest('hex');
    if (got !== want) throw new UpgradeBundleError(`sha256 ${got}, the manifest says ${want}`, m.name);
  }
}

export interface VerifiedBundle { manifest: UpgradeManifest; parts: Map<string, Buffer> }

/** A whole bundle in memory, checked by a BundleReader: the manifest and each part's bytes. */
export function verifyUpgradeBundle(bundle: Buffer, trusted: KeyObject | readonly KeyObject[]): VerifiedBundle {
  const parts = new Map<string, Buffer[]>();
  const reader = new BundleReader(Array.isArray(trusted) ? trusted : [trusted as KeyObject], {
    part: (p, data) => { parts.set(p.name, [...(parts.get(p.name) ?? []), data]); },
  });
  reader.push(bundle);
  const manifest = reader.finish();
  return { manifest, parts: new Map([...parts].map(([k, v]) => [k, Buffer.concat(v)])) };
}
