// tar-read: the entries of a tar archive held in memory (an OCI layer, once decompressed, or a `docker save`
// archive), in archive order, through tar-stream (the format's maintained parser: ustar, pax and GNU long names).
import { extract, type Header } from 'tar-stream';
import { Readable } from 'node:stream';

/** A header as read (every field) or as written in tests (a name and what matters). */
export type TarHeader = Partial<Header> & Pick<Header, 'name'>;

export interface TarEntry {
  header: TarHeader;
  data: Buffer;
}

export async function readTar(archive: Buffer, what: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const x = extract();
  const done = new Promise<void>((resolve, reject) => {
    x.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        entries.push({ header, data: Buffer.concat(chunks) });
        next();
      });
      stream.on('error', reject);
    });
    x.on('finish', resolve);
    x.on('error', (e: Error) => reject(new Error(`${what}: not a tar archive: ${e.message}`, { cause: e })));
  });
  Readable.from([archive]).pipe(x);
  await done;
  return entries;
}
