// http-get: the one HTTP client of the machine (the platform sources, the installer). Strict
// and bounded: every request has a timeout, every body a size limit, and a body shorter than
// its Content-Length (a truncated answer) is an error, not data. Failures name the URL and
// what went wrong. A body too large to hold (a disk image) streams instead (httpOpen). https
// is verified against the CA bundle in the image: the Mozilla roots compiled into the init's
// Node runtime (there is no other trust store on a machine without a root filesystem).
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { TIME_VERIFY_CODES } from '../pki/validity.ts';
import { clockNote } from './clock-floor.ts';

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'PUT';
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** Bodies larger than this are refused (default 1 MiB). */
  maxBytes?: number;
  /** https: trust these CAs (PEM) instead of the image's bundle (tests, private clouds). */
  ca?: string[];
  /** Redirects followed (301, 302, 303, 307, 308), each to a URL not seen before; 0 (default): none. */
  maxRedirects?: number;
}

const TLS_TRUST_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED',
]);

/** A failed request's reason, with what to check for the TLS failures a machine at boot meets. */
function failure(url: string, e: NodeJS.ErrnoException): string {
  const code = e.code ?? '';
  if (TLS_TRUST_CODES.has(code)) {
    return `${url}: TLS: the server's certificate is not signed by a CA the image trusts (${code})`;
  }
  if (TIME_VERIFY_CODES.has(code)) {
    const when = code === 'CERT_HAS_EXPIRED' ? 'has expired' : 'is not valid yet';
    return `${url}: TLS: the server's certificate ${when} (${code}), ${clockNote(Date.now())}`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `${url}: TLS: the certificate does not name this host (${code})`;
  return `${url}: ${e.code ?? e.message}`;
}

export type HttpResult =
  | { ok: true; status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }
  /** `refused`: the server's answer was the problem (too large, a redirect loop), not the network. */
  | { ok: false; message: string; refused?: 'too-large' | 'redirects' };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A redirect not followed: a loop, or more than allowed. The server's answer, not the network's. */
export class RedirectRefused extends Error {}

/**
 * The redirects of one request as it follows them: each to a URL not seen before, at most `max`, and the
 * Authorization header kept only while the host stays the same.
 */
class RedirectTrail {
  private readonly seen = new Set<string>();
  at: string;
  constructor(private readonly first: string, private readonly max: number, public headers: Record<string, string>) {
    this.at = first;
    this.seen.add(first);
  }

  /** The URL an answer of `status` with `location` sends the request to next; undefined: it is no redirect. */
  follow(status: number, location: string | string[] | undefined): string | undefined {
    if (!REDIRECTS.has(status) || typeof location !== 'string') return undefined;
    const next = new URL(location, this.at).toString();
    if (this.seen.size > this.max) {
      throw new RedirectRefused(`${this.first}: more than ${this.max} redirects (the last to ${next})`);
    }
    if (this.seen.has(next)) throw new RedirectRefused(`${this.first}: a redirect loop (back to ${next})`);
    if (new URL(next).host !== new URL(this.at).host) {
      this.headers = Object.fromEntries(Object.entries(this.headers)
        .filter(([k]) => k.toLowerCase() !== 'authorization'));
    }
    this.seen.add(next);
    this.at = next;
    return next;
  }
}

/** The URL, or why it cannot be fetched. */
function parseHttpUrl(raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${raw}: not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `${raw}: only http:// and https:// are supported (got ${url.protocol})`;
  }
  return url;
}

/**
 * A request over http or https, as the URL says. Each module is loaded at its first request, not with this one: a
 * plugin process that never asks (the platform plugin on a machine configured by fw_cfg) holds neither (https and
 * the tls under it: 5 MiB in every process that loads them, measured on the host).
 */
function send(url: URL, r: Pick<HttpRequest, 'method' | 'headers' | 'ca'>, onAnswer: (res: IncomingMessage) => void):
ClientRequest {
  const options: RequestOptions & { ca?: string[] } = { method: r.method ?? 'GET', headers: r.headers ?? {} };
  if (r.ca) options.ca = r.ca;
  const client = process.getBuiltinModule(url.protocol === 'https:' ? 'node:https' : 'node:http');
  return client.request(url, options, onAnswer);
}

/** One request, its redirects followed as `maxRedirects` allows (RedirectTrail); its answer, or why none. */
export async function httpRequest(r: HttpRequest): Promise<HttpResult> {
  const trail = new RedirectTrail(r.url, r.maxRedirects ?? 0, r.headers ?? {});
  for (;;) {
    const answer = await requestOnce({ ...r, url: trail.at, headers: trail.headers });
    try {
      if (!answer.ok || !trail.follow(answer.status, answer.headers.location)) return answer;
    } catch (e) {
      if (e instanceof RedirectRefused) return { ok: false, message: e.message, refused: 'redirects' };
      throw e;
    }
  }
}

function requestOnce(r: HttpRequest): Promise<HttpResult> {
  const timeoutMs = r.timeoutMs ?? 5000;
  const maxBytes = r.maxBytes ?? 1 << 20;
  const url = parseHttpUrl(r.url);
  if (typeof url === 'string') return Promise.resolve({ ok: false, message: url });
  const start = (onAnswer: (res: IncomingMessage) => void): ClientRequest => send(url, r, onAnswer);
  return new Promise((resolve) => {
    let settled = false;
    const done = (x: HttpResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(x);
      }
    };
    const req = start((res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy();
          done({ ok: false, message: `${r.url}: the answer is larger than ${maxBytes} bytes`, refused: 'too-large' });
        } else chunks.push(c);
      });
      res.on('end', () => {
        if (!res.complete) done({ ok: false, message: `${r.url}: the answer was cut short (truncated body)` });
        else done({ ok: true, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (e) => done({ ok: false, message: `${r.url}: ${e.message}` }));
      res.on('aborted', () => done({ ok: false, message: `${r.url}: the answer was cut short (truncated body)` }));
    });
    // One deadline for the whole exchange: connect, headers and body.
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, message: `${r.url}: no complete answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => done({ ok: false, message: failure(r.url, e) }));
    req.end();
  });
}

export type HttpOpenOptions = Pick<HttpRequest, 'headers' | 'ca' | 'maxRedirects'>;

/** The status of an answer that is not the body asked for: the caller may read `status` (401, 404...). */
export class HttpStatusError extends Error {
  constructor(message: string, readonly status: number, readonly headers: IncomingMessage['headers']) {
    super(message);
  }
}

/**
 * GET of a body too large to hold: the answer, to be read as a stream, once its status is 200; else an Error that
 * names the URL (an HttpStatusError for an answer of another status). The server may go quiet for at most `idleMs`
 * at any point, headers or body. Redirects are followed as `maxRedirects` allows (RedirectTrail: RedirectRefused).
 */
export async function httpOpen(raw: string, idleMs = 30_000, o: HttpOpenOptions = {}): Promise<IncomingMessage> {
  const trail = new RedirectTrail(raw, o.maxRedirects ?? 0, o.headers ?? {});
  for (;;) {
    try {
      return await openOnce(trail.at, idleMs, { headers: trail.headers, ...(o.ca ? { ca: o.ca } : {}) });
    } catch (e) {
      if (!(e instanceof HttpStatusError) || !trail.follow(e.status, e.headers.location)) throw e;
    }
  }
}

function openOnce(raw: string, idleMs: number, o: Pick<HttpRequest, 'headers' | 'ca'>): Promise<IncomingMessage> {
  const url = parseHttpUrl(raw);
  if (typeof url === 'string') return Promise.reject(new Error(url));
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const req = send(url, o, (res) => {
      if (res.statusCode === 200) {
        response = res;
        resolve(res);
        return;
      }
      res.resume();
      reject(new HttpStatusError(`${raw}: HTTP ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd(),
        res.statusCode ?? 0, res.headers));
    });
    req.setTimeout(idleMs, () => {
      const e = new Error(`${raw}: nothing received for ${idleMs / 1000} s`);
      // Quiet in the middle of the body: its reader hears why, not a bare "aborted".
      response?.destroy(e);
      req.destroy(e);
    });
    req.on('error', (e: NodeJS.ErrnoException) => reject(e.message.startsWith(`${raw}: `) ? e
      : new Error(failure(raw, e), { cause: e })));
    req.end();
  });
}
