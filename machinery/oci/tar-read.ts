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

/** Every entry of the archive held in `archive`, its bytes read (a `docker save` archive, whole). */
export async function readTar(archive: Buffer, what: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  await eachTarEntry(Readable.from([archive]), what, async (header, body) => {
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c);
    entries.push({ header, data: Buffer.concat(chunks) });
  });
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
