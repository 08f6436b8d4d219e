// tuf-fetcher: how tuf-js's Updater fetches, over the machine's own HTTP client (machinery/sys/http-get.ts) instead
// of its default fetcher (Node's fetch): one HTTP stack in PID 1, its timeouts, its TLS trust and error words. A body
// is refused once it passes the length TUF allows for it; a download goes to a file in our staging folder on /var
// (not the default temporary folder: /tmp is memory on the machine). Counts the bytes it fetched, for UpdateStatus
// and the metrics.
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { DownloadHTTPError, DownloadLengthMismatchError } from 'tuf-js/dist/error.js';
import type { Fetcher } from 'tuf-js/dist/fetcher.js';
import { httpOpen, HttpStatusError, type HttpOpenOptions } from '../../machinery/sys/http-get.ts';

export class TufFetcher implements Fetcher {
  /** Bytes fetched since the last reset. */
  bytes = 0;
  private serial = 0;

  constructor(private readonly stagingDir: string, private readonly http: HttpOpenOptions = {}) {}

  async open(url: string) {
    try {
      return await httpOpen(url, 30_000, { maxRedirects: 3, ...this.http });
    } catch (e) {
      // tuf-js ends its walk over root versions on a 404 or 403: the status must reach it as its own error.
      if (e instanceof HttpStatusError) throw new DownloadHTTPError(e.message, e.status);
      throw e;
    }
  }

  /** A stage that counts the bytes and refuses past `max`. */
  private limit(url: string, max: number) {
    let n = 0;
    return new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        n += chunk.length;
        this.bytes += chunk.length;
        if (n > max) done(new DownloadLengthMismatchError(`${url}: more than the ${max} bytes TUF allows for it`));
        else done(null, chunk);
      },
    });
  }

  async downloadFile<T>(url: string, maxLength: number, handler: (file: string) => Promise<T>): Promise<T> {
    mkdirSync(this.stagingDir, { recursive: true, mode: 0o700 });
    const file = join(this.stagingDir, `download-${process.pid}-${++this.serial}`);
    try {
      const res = await this.open(url);
      await pipeline(res, this.limit(url, maxLength), createWriteStream(file, { mode: 0o600 }));
      return await handler(file);
    } finally {
      rmSync(file, { force: true });
    }
  }

  async downloadBytes(url: string, maxLength: number): Promise<Buffer> {
    const res = await this.open(url);
    const chunks: Buffer[] = [];
    const limit = this.limit(url, maxLength);
    await pipeline(res, limit, async function* (source: AsyncIterable<Buffer>) {
      for await (const c of source) chunks.push(c);
    });
    return Buffer.concat(chunks);
  }
}
