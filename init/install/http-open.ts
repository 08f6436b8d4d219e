// http-open: the installer's one HTTP client: a GET whose answer streams (a disk image is
// hundreds of megabytes), refused unless it is 200, cut off when the server goes quiet.
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';

/** How long the server may send nothing, at any point, before the transfer fails. */
export const HTTP_IDLE_MS = 30_000;

/** The answer to GET `url`, once its status is 200; else an Error naming the URL and what came back. */
export function httpOpen(url: string, idleMs = HTTP_IDLE_MS): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try { u = new URL(url); } catch (e) { reject(new Error(`${url}: not a URL`, { cause: e })); return; }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      reject(new Error(`${url}: only http and https are fetched`));
      return;
    }
    const req = (u.protocol === 'https:' ? httpsGet : httpGet)(u, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${url}: HTTP ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd()));
        return;
      }
      resolve(res);
    });
    req.setTimeout(idleMs, () => req.destroy(new Error(`GET ${url}: nothing received for ${idleMs / 1000} s`)));
    req.on('error', (e) => reject(e.message.startsWith('GET ') ? e
      : new Error(`GET ${url}: ${e.message}`, { cause: e })));
  });
}

/** The whole body, refused past `max` bytes or when shorter than its Content-Length. */
export async function readBody(res: IncomingMessage, url: string, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > max) { res.destroy(); throw new Error(`GET ${url}: the answer is larger than ${max} bytes`); }
    chunks.push(c);
  }
  const declared = Number(res.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared !== n) {
    throw new Error(`GET ${url}: ${n} bytes received of the ${declared} announced`);
  }
  return Buffer.concat(chunks);
}
