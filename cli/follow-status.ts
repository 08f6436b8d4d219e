// follow-status: what the commands that declare a request (install, upgrade, rollback) share: the
// request's id, and the watch on the status of the same id that the machine writes as it goes.
import { randomBytes } from 'node:crypto';
import type { Pointer } from '../cosi/resource/resource.ts';
import type { WatchEvent } from '../cosi/state/state.ts';
import { flag, type Parsed } from './args.ts';
import { CliError, EXIT } from './errors.ts';
import type { Session } from './session.ts';

/** --id, or `<kind>-<time>-<4 hex>`: the time says when; the suffix keeps two of the same second apart. */
export function requestId(kind: string, p: Parsed): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return flag(p, 'id') ?? `${kind}-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * Watches the status at `pointer`, handing each version the machine writes to `seen`, until `seen` says the
 * request ended (its result) or the connection is lost (CliError, unreachable). Started before the request is
 * created: the status may come and finish before a watch started after the create would see it.
 */
export async function followStatus<T>(
  s: Session, pointer: Pointer, what: string, seen: (status: T) => boolean,
): Promise<{ ended: Promise<T>; close(): void }> {
  let resolveEnd: (r: T) => void = () => undefined;
  const end = new Promise<T>((r) => {
    resolveEnd = r;
  });
  const watch = await s.state.watch(pointer, {}, (events: readonly WatchEvent[]) => {
    for (const e of events) {
      if ((e.type !== 'created' && e.type !== 'updated') || e.resource.metadata.version === 0) continue;
      const st = e.resource.spec as T;
      if (seen(st)) resolveEnd(st);
    }
  });
  const gone = watch.done.then((e): never => {
    throw new CliError(`the machine stopped answering before ${what} ended${e ? `: ${e.message}` : ''}`,
      EXIT.unreachable);
  });
  // Nobody may await `ended` (--no-wait): its rejection when the watch closes is not an error then.
  const ended = Promise.race([end, gone]);
  ended.catch(() => undefined);
  return { ended, close: () => watch.close() };
}
