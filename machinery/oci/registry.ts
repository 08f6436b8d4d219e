// registry: an image pulled by digest through the OCI Distribution API (v2): its manifest (an index resolved to
// its linux/amd64 image), then its config and layers as blobs, each checked against the digest that names it before
// anything uses it, each bounded (a manifest of at most MAX_MANIFEST_BYTES, a blob of at most the size its
// descriptor gives). HTTPS verified with the machine's roots or the CAs given; plain HTTP only when asked. A
// registry that asks for a token (WWW-Authenticate: Bearer realm=...) gets one from its realm, anonymously or with
// the credentials given; one that asks for Basic gets the credentials. What the registry refuses or answers wrongly
// (not by digest, another digest, too large, not found, not authorized, a redirect loop) is a RegistryRefused that
// names the reference and the reason; a network failure is a plain Error (a later try may work). Shared by
// `appliance build` (an `oci:` reference) and the machine (an ExtensionSpec's `oci://` source).
import { createHash } from 'node:crypto';
import { createWriteStream, renameSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { hashingStream } from '../sys/hashing-stream.ts';
import { discardPartial } from '../sys/partial-file.ts';
import { httpOpen, httpRequest, HttpStatusError, RedirectRefused } from '../sys/http-get.ts';
import { MEDIA } from './media.ts';

/** A manifest larger than this is refused: a manifest lists blobs, it does not hold them. */
export const MAX_MANIFEST_BYTES = 4 << 20;
/** Redirects followed per request (blob stores answer with one, to a CDN or a bucket). */
export const MAX_REDIRECTS = 5;

export interface OciReference { registry: string; repository: string; digest: string }

const HOST_RE = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$/;
const REPOSITORY_RE = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$/;
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

/** `oci://HOST[:PORT]/REPOSITORY@sha256:HEX`, or why it is not one (a tag is refused: it may move). */
export function parseOciReference(text: string): OciReference | string {
  const m = /^oci:\/\/([^/]+)\/([^@]+)(?:@(.*))?$/.exec(text);
  const want = 'want oci://HOST[:PORT]/REPOSITORY@sha256:<64 hex digits>';
  if (!m) return `${text}: ${want}`;
  const [, registry = '', path = '', digest] = m;
  if (digest === undefined) {
    return `${text}: not by digest (a tag may point at another image tomorrow): ${want}`;
  }
  if (!HOST_RE.test(registry)) return `${text}: "${registry}" is not a host[:port]`;
  if (!REPOSITORY_RE.test(path)) return `${text}: "${path}" is not a repository name (lowercase, / separated)`;
  if (!DIGEST_RE.test(digest)) return `${text}: "${digest}" is not a sha256 digest: ${want}`;
  return { registry, repository: path, digest };
}

export const ociReferenceText = (r: OciReference) => `oci://${r.registry}/${r.repository}@${r.digest}`;

export interface RegistryAccess {
  /** http:// rather than https:// (a registry on a private network, said so by whoever declares the pull). */
  insecure?: boolean;
  /** https: trust these CAs (PEM) instead of the machine's roots. */
  ca?: string[];
  credentials?: { username: string; password: string };
  /** Each manifest or token request, whole (default 30 s). */
  timeoutMs?: number;
  /** The longest a blob's server may go quiet (default 30 s). */
  idleMs?: number;
}

/** What the registry refused or answered wrongly: another try gets the same. */
export class RegistryRefused extends Error {}

/** A content descriptor: what a manifest says of a blob or of another manifest. */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { os?: string; architecture?: string };
}

export interface PulledManifest {
  /** The image manifest's own digest (the reference's, or the one its index chose). */
  digest: string;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  /** Its bytes, as the registry served them (their sha256 is `digest`). */
  bytes: Buffer;
}

interface Challenge { scheme: string; params: Record<string, string> }

/** A WWW-Authenticate header's scheme and parameters (realm, service, scope). */
export function parseChallenge(header: string): Challenge | undefined {
  const m = /^\s*(\w+)\s*(.*)$/.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of (m[2] ?? '').matchAll(/(\w+)=("([^"]*)"|[^,\s]*)/g)) params[p[1]!.toLowerCase()] = p[3] ?? p[2]!;
  return { scheme: m[1]!.toLowerCase(), params };
}

const MANIFEST_ACCEPT = [MEDIA.ociIndex, MEDIA.ociManifest, MEDIA.dockerList, MEDIA.dockerManifest].join(', ');
const sha256Of = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function isDescriptor(v: unknown): v is Descriptor {
  const d = v as Descriptor;
  return typeof d === 'object' && d !== null && typeof d.mediaType === 'string' && typeof d.digest === 'string'
    && DIGEST_RE.test(d.digest) && Number.isSafeInteger(d.size) && d.size >= 0;
}

/** One image's registry, repository and access: its manifest and blobs, each checked. */
export class RegistryClient {
  private authorization: string | undefined;
  private readonly base: string;
  private readonly name: string;

  constructor(readonly ref: OciReference, private readonly access: RegistryAccess = {}) {
    this.base = `${access.insecure ? 'http' : 'https'}://${ref.registry}/v2/${ref.repository}`;
    this.name = ociReferenceText(ref);
  }

  /** The image manifest the reference names (an index's linux/amd64 one), its config and layers. */
  async manifest(): Promise<PulledManifest> {
    const first = await this.manifestBytes(this.ref.digest);
    const doc = this.parse(first, this.ref.digest);
    if (doc.mediaType === MEDIA.ociIndex || doc.mediaType === MEDIA.dockerList) {
      const manifests = Array.isArray(doc.manifests) ? doc.manifests.filter(isDescriptor) : [];
      const chosen = manifests.find((d) => d.platform?.os === 'linux' && d.platform.architecture === 'amd64');
      if (!chosen) {
        const have = manifests.map((d) => `${d.platform?.os ?? '?'}/${d.platform?.architecture ?? '?'}`);
        throw new RegistryRefused(`${this.name}: no linux/amd64 image in its index `
          + `(it has ${have.join(', ') || 'none'})`);
      }
      const inner = await this.manifestBytes(chosen.digest);
      return this.imageManifest(this.parse(inner, chosen.digest), chosen.digest, inner.bytes);
    }
    return this.imageManifest(doc, this.ref.digest, first.bytes);
  }

  /** Blob `d` written to `file` (through a temporary name), once its bytes are its digest and its size. */
  async blob(d: Descriptor, file: string): Promise<void> {
    const url = `${this.base}/blobs/${d.digest}`;
    const res = await this.withAuth(url, (headers) => httpOpen(url, this.access.idleMs ?? 30_000, {
      headers, maxRedirects: MAX_REDIRECTS, ...(this.access.ca ? { ca: this.access.ca } : {}),
    }));
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > d.size) {
      res.destroy();
      throw new RegistryRefused(`${this.name}: blob ${d.digest}: ${declared} bytes, its descriptor says ${d.size}`);
    }
    const hash = createHash('sha256');
    const counter = hashingStream(hash, (total) => {
      if (total > d.size) {
        counter.destroy(new RegistryRefused(`${this.name}: blob ${d.digest}: more than the ${d.size} bytes its `
          + 'descriptor says'));
      }
    });
    const partial = `${file}.partial`;
    const sink = createWriteStream(partial, { mode: 0o600 });
    try {
      await pipeline(res, counter, sink);
      if (counter.bytes !== d.size) {
        throw new Error(`${this.name}: blob ${d.digest}: cut short: ${counter.bytes} of ${d.size} bytes`);
      }
      const got = `sha256:${hash.digest('hex')}`;
      if (got !== d.digest) throw new RegistryRefused(`${this.name}: blob ${d.digest}: its bytes are ${got}`);
      renameSync(partial, file);
    } catch (e) {
      await discardPartial(sink, partial);
      throw e;
    }
  }

  private imageManifest(doc: Record<string, unknown>, digest: string, bytes: Buffer): PulledManifest {
    const mediaType = String(doc.mediaType ?? '');
    if (mediaType !== MEDIA.ociManifest && mediaType !== MEDIA.dockerManifest) {
      throw new RegistryRefused(`${this.name}: manifest ${digest}: media type "${mediaType}" is not an image's`);
    }
    const layers = Array.isArray(doc.layers) ? doc.layers : [];
    if (!isDescriptor(doc.config) || !layers.every(isDescriptor)) {
      throw new RegistryRefused(`${this.name}: manifest ${digest}: its config or a layer is no content descriptor`);
    }
    return { digest, mediaType, config: doc.config, layers, bytes };
  }

  /**
   * The manifest as an object, its media type its own field or, where it has none (OCI makes it optional; umoci
   * leaves it out), the answer's Content-Type.
   */
  private parse(m: { bytes: Buffer; contentType: string }, digest: string):
    Record<string, unknown> & { manifests?: unknown[] } {
    try {
      const v = JSON.parse(m.bytes.toString('utf8')) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const doc = v as Record<string, unknown>;
        return { ...doc, mediaType: typeof doc.mediaType === 'string' ? doc.mediaType : m.contentType };
      }
    } catch {
      // said below, with the digest
    }
    throw new RegistryRefused(`${this.name}: manifest ${digest}: not a JSON object`);
  }

  /** The manifest named `digest`, its bytes checked against it. */
  private async manifestBytes(digest: string): Promise<{ bytes: Buffer; contentType: string }> {
    const url = `${this.base}/manifests/${digest}`;
    const got = await this.withAuth(url, (headers) => this.getBounded(url, { ...headers, accept: MANIFEST_ACCEPT }));
    const hash = sha256Of(got.bytes);
    if (hash !== digest) throw new RegistryRefused(`${this.name}: manifest ${digest}: its bytes are ${hash}`);
    return got;
  }

  /** A bounded GET, its redirects followed (not in a loop): a 200's body and type; an HttpStatusError otherwise. */
  private async getBounded(
    url: string, headers: Record<string, string>,
  ): Promise<{ bytes: Buffer; contentType: string }> {
    const r = await httpRequest({ url, headers, maxBytes: MAX_MANIFEST_BYTES, maxRedirects: MAX_REDIRECTS,
      timeoutMs: this.access.timeoutMs ?? 30_000, ...(this.access.ca ? { ca: this.access.ca } : {}) });
    if (!r.ok) {
      // Too large, or a redirect loop: the registry's answer; anything else, the network's.
      if (r.refused) throw new RegistryRefused(`${this.name}: ${r.message}`);
      throw new Error(`${this.name}: ${r.message}`);
    }
    if (r.status === 200) {
      return { bytes: r.body, contentType: String(r.headers['content-type'] ?? '').split(';')[0]!.trim() };
    }
    throw new HttpStatusError(`${url}: HTTP ${r.status}`, r.status, r.headers);
  }

  /**
   * `request` with this client's authorization; a 401 answered once (a token from the realm the registry names, or
   * Basic credentials) and tried again; a second 401, a 404 and other statuses said as refusals.
   */
  private async withAuth<T>(url: string, request: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    const headers = (): Record<string, string> => (this.authorization ? { authorization: this.authorization } : {});
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(headers());
      } catch (e) {
        if (!(e instanceof HttpStatusError)) {
          if (e instanceof RegistryRefused) throw e;
          // A loop, or too many redirects, is the registry's answer, not the network's.
          if (e instanceof RedirectRefused) throw new RegistryRefused(`${this.name}: ${e.message}`, { cause: e });
          throw e;
        }
        if (e.status === 401 && attempt === 0) {
          await this.authorize(String(e.headers['www-authenticate'] ?? ''));
          continue;
        }
        if (e.status === 401) {
          throw new RegistryRefused(`${this.name}: ${url}: not authorized ${this.access.credentials
            ? `with the credentials of ${this.access.credentials.username}` : 'anonymously (give credentials)'}`);
        }
        if (e.status === 404) throw new RegistryRefused(`${this.name}: ${url}: not found (HTTP 404)`);
        if (e.status >= 500 || e.status === 429) {
          throw new Error(`${this.name}: ${url}: HTTP ${e.status}`, { cause: e });
        }
        throw new RegistryRefused(`${this.name}: ${url}: HTTP ${e.status}`);
      }
    }
  }

  /** Answers a challenge: a Bearer token from its realm, or Basic credentials. */
  private async authorize(header: string): Promise<void> {
    const c = parseChallenge(header);
    const creds = this.access.credentials;
    const basic = creds ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}` : undefined;
    if (c?.scheme === 'basic') {
      if (!basic) {
        throw new RegistryRefused(`${this.name}: the registry asks for credentials (Basic) and none are given`);
      }
      this.authorization = basic;
      return;
    }
    if (c?.scheme !== 'bearer' || !c.params.realm) {
      throw new RegistryRefused(`${this.name}: the registry answers 401 without a challenge this client takes `
        + `(WWW-Authenticate: ${header || 'none'})`);
    }
    const realm = new URL(c.params.realm);
    if (c.params.service) realm.searchParams.set('service', c.params.service);
    realm.searchParams.set('scope', c.params.scope ?? `repository:${this.ref.repository}:pull`);
    const r = await httpRequest({
      url: realm.toString(), headers: basic ? { authorization: basic } : {}, maxBytes: 64 << 10,
      timeoutMs: this.access.timeoutMs ?? 30_000, ...(this.access.ca ? { ca: this.access.ca } : {}),
    });
    if (!r.ok) throw new Error(`${this.name}: its token: ${r.message}`);
    if (r.status !== 200) {
      throw new RegistryRefused(`${this.name}: its token realm ${realm.origin}${realm.pathname} answered `
        + `HTTP ${r.status}`);
    }
    let token: unknown;
    try {
      const doc = JSON.parse(r.body.toString('utf8')) as { token?: unknown; access_token?: unknown };
      token = doc.token ?? doc.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string' || !token) {
      throw new RegistryRefused(`${this.name}: its token realm answered no token`);
    }
    this.authorization = `Bearer ${token}`;
  }
}
