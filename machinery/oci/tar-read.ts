// tar-read: the entries of a tar archive, in archive order, through tar-stream (the format's maintained parser: ustar,
// pax and GNU long names): all at once from one held in memory (a `docker save` archive), or one at a time from a
// stream (a layer being unpacked).
import { extract, type Header } from 'tar-stream';
import { Readable } from 'node:stream';

/** A header as read (every field) or as written in tests (a name and what matters). */
export type TarHeader = Partial<Header> & Pick<Header, 'name'>;

export interface TarEntry<D = Buffer> {
  header: TarHeader;
  data: D;
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

/**
 * Hands each entry of the tar archive streaming from `source` to `onEntry` in order, with its index and its body
 * (what the handler leaves unread is skipped), holding one entry at a time: a layer of any size in little memory.
 * An archive that does not parse is an Error naming `what`.
 */
export async function eachTarEntry(
  source: Readable, what: string,
  onEntry: (header: Header, body: AsyncIterable<Buffer>, index: number) => Promise<void>,
): Promise<void> {
  const x = extract();
  let failed: Error | undefined;
  source.on('error', (e: Error) => {
    failed ??= e;
    x.destroy(e);
  });
  source.pipe(x as unknown as NodeJS.WritableStream);
  let index = 0;
  let refusal: unknown;
  try {
    for await (const entry of x) {
      try {
        await onEntry(entry.header, entry as AsyncIterable<Buffer>, index++);
      } catch (e) {
        refusal = e;
        throw e;
      }
      entry.resume();
    }
  } catch (e) {
    source.destroy();
    // What the source said (a digest, a size, a limit) or the handler: their own; anything else, the archive's.
    if (failed) throw failed;
    if (refusal !== undefined) throw refusal;
    throw new NotTarArchive(`${what}: not a tar archive: ${(e as Error).message}`, { cause: e });
  }
}

/** An archive tar-stream could not parse: its bytes', not the reader's, failing. */
export class NotTarArchive extends Error {}
