// yielder: long work done in slices, handing the event loop back between them, so that
// PID 1 keeps answering other clients while it parses or applies a large config.
import { msSinceStart } from '../../cosi/monotonic.ts';

/** A function to call between steps: it resolves at once until `sliceMs` have passed, then after a turn of I/O. */
export function yielder(sliceMs = 10): () => Promise<void> | undefined {
  let since = msSinceStart();
  return () => {
    if (msSinceStart() - since < sliceMs) return undefined;
    return new Promise((r) => setImmediate(() => {
      since = msSinceStart();
      r();
    }));
  };
}
