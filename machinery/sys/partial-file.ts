// partial-file: a download's temporary file thrown away after a failure. A write stream opens its file
// asynchronously: removed before the stream has closed, the file may be created after the removal and left behind.
import { rmSync, type WriteStream } from 'node:fs';

/** Closes `sink` (when it is still open), then removes `path`. */
export async function discardPartial(sink: WriteStream | undefined, path: string): Promise<void> {
  if (sink && !sink.closed) {
    await new Promise<void>((r) => {
      sink.once('close', () => r());
      sink.destroy();
    });
  }
  rmSync(path, { force: true });
}
