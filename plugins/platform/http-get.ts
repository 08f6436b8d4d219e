// http-get: the one HTTP client of the platform sources. Strict and bounded: every
// request has a timeout, every body a size limit, and a body shorter than its
// Content-Length (a truncated answer) is an error, not data. Failures are values that
// name the URL and what went wrong.
import { request } from 'node:http';

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'PUT';
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** Bodies larger than this are refused (default 1 MiB). */
  maxBytes?: number;
}

export type HttpResult =
  | { ok: true; status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }
  | { ok: false; message: string };

export function httpRequest(r: HttpRequest): Promise<HttpResult> {
  const timeoutMs = r.timeoutMs ?? 5000;
  const maxBytes = r.maxBytes ?? 1 << 20;
  let url: URL;
  try { url = new URL(r.url); } catch { return Promise.resolve({ ok: false, message: `${r.url}: not a URL` }); }
  if (url.protocol !== 'http:') {
    return Promise.resolve({ ok: false, message: `${r.url}: only http:// is supported (got ${url.protocol})` });
  }
  return new Promise((resolve) => {
    let settled = false;
    const done = (x: HttpResult) => { if (!settled) { settled = true; clearTimeout(timer); resolve(x); } };
    const req = request(url, { method: r.method ?? 'GET', headers: r.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy();
          done({ ok: false, message: `${r.url}: the answer is larger than ${maxBytes} bytes` });
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
    req.on('error', (e: NodeJS.ErrnoException) => done({ ok: false, message: `${r.url}: ${e.code ?? e.message}` }));
    req.end();
  });
}
