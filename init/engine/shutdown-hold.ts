// shutdown-hold: a shutdown others can delay. The ShutdownRequest "shutdown" (runtime) is there from
// boot with no action; whoever must not be cut off (a database flushing, a quorum to keep) puts a
// finalizer on it ahead of time, and takes it off when it may go. When a shutdown begins, whatever
// asked for it (an API PowerRequest, the power button, a signal), the engine writes what and why into
// it and into MachineStatus "machine" (stage stopping), then waits until no finalizer is left or the
// grace period is over, keeping MachineStatus's held_by current; only then do services stop.
import type { MachineStatusSpec, PowerAction, ShutdownRequestSpec } from '../../proto/gen/spec-types.ts';
import type { MemoryState } from '../../cosi/state/memory-state.ts';
import { upsert } from '../../cosi/state/upsert.ts';
import type { Logger } from '../../machinery/log.ts';
import { MACHINE_STATUS_TYPE, RUNTIME_NS, SHUTDOWN_REQUEST_TYPE } from '../../proto/gen/resource-types.ts';
import { MACHINE_STATUS_ID, SHUTDOWN_REQUEST_ID } from '../../machinery/model/singleton-ids.ts';

export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
/** Cmdline parameter: the default grace period in seconds. */
export const SHUTDOWN_GRACE_PARAM = 'appliance.shutdown_grace_s';

export interface HoldOptions {
  /** How long holders may delay this shutdown (default: the machine's). */
  graceMs?: number;
  /** Do not wait for holders. */
  force?: boolean;
}

export interface ShutdownHold {
  /** Publishes the shutdown and waits for its holders (or the grace period); never throws. */
  prepare(action: PowerAction, reason: string, o?: HoldOptions): Promise<void>;
}

const REQUEST = { namespace: RUNTIME_NS, type: SHUTDOWN_REQUEST_TYPE, id: SHUTDOWN_REQUEST_ID };
const STATUS = { namespace: RUNTIME_NS, type: MACHINE_STATUS_TYPE, id: MACHINE_STATUS_ID };

export async function startShutdownHold(o: {
  state: MemoryState; owner: string; log: Logger; graceMs?: number;
}): Promise<ShutdownHold> {
  await upsert(o.state, REQUEST, { reason: '' } satisfies ShutdownRequestSpec, o.owner);
  await upsert(o.state, STATUS, { stage: 'running', reason: '', holdResult: '' } satisfies MachineStatusSpec, o.owner);
  const holders = () => o.state.findSync(REQUEST)?.metadata.finalizers ?? [];
  let started = false;
  return {
    async prepare(action, reason, h = {}) {
      if (started) return;
      started = true;
      const graceMs = h.graceMs ?? o.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
      const now = Date.now();
      const deadline = new Date(now + graceMs).toISOString();
      const status = (heldBy: readonly string[], holdResult = ''): MachineStatusSpec => ({
        stage: 'stopping', action, reason, heldBy: [...heldBy], deadline, holdResult,
      });
      try {
        await upsert(o.state, REQUEST, {
          action, reason, requested: new Date(now).toISOString(), deadline,
        } satisfies ShutdownRequestSpec, o.owner);
        if (h.force) {
          const held = holders();
          const result = `forced: not waiting for ${held.join(', ') || 'anyone'}`;
          await upsert(o.state, STATUS, status(held, result), o.owner);
          return;
        }
        await upsert(o.state, STATUS, status(holders()), o.owner);
        const result = await waitForHolders(o, graceMs, async (held) => {
          o.log.info(`${action} held by ${held.join(', ')} (waiting up to ${Math.round(graceMs / 1000)} s)`);
          await upsert(o.state, STATUS, status(held), o.owner);
        });
        (result.startsWith('grace') ? o.log.warn : o.log.info)(`${action}: ${result}`);
        await upsert(o.state, STATUS, status(holders(), result), o.owner);
      } catch (e) {
        // A shutdown must go on whatever the bookkeeping does.
        o.log.error(`shutdown hold: ${(e as Error).message}; going on`);
      }
    },
  };
}

/** Resolves with how the wait ended: every holder let go, or the grace period ran out (naming who held). */
async function waitForHolders(
  o: { state: MemoryState; owner: string }, graceMs: number, changed: (held: readonly string[]) => Promise<void>,
): Promise<string> {
  const first = o.state.findSync(REQUEST)?.metadata.finalizers ?? [];
  if (!first.length) return 'no holders';
  let shown = first.join(',');
  await changed(first);
  let done!: (result: string) => void;
  const ended = new Promise<string>((r) => {
    done = r;
  });
  const timer = setTimeout(() => {
    done(`grace period of ${Math.round(graceMs / 1000)} s over: going on without `
      + `${(o.state.findSync(REQUEST)?.metadata.finalizers ?? []).join(', ')}`);
  }, graceMs);
  const w = await o.state.watch(REQUEST, {}, async (events) => {
    const last = events.at(-1);
    if (!last || last.type === 'bootstrapped') return;
    const held = last.resource.metadata.finalizers;
    if (!held.length) {
      done(`every holder let go (${first.join(', ')})`);
      return;
    }
    if (held.join(',') !== shown) {
      shown = held.join(',');
      await changed(held);
    }
  });
  try {
    // A holder may have let go between the first look and the watch.
    if (!(o.state.findSync(REQUEST)?.metadata.finalizers.length)) done(`every holder let go (${first.join(', ')})`);
    return await ended;
  } finally {
    clearTimeout(timer);
    w.close();
  }
}
