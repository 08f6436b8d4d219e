// runtime: runs controllers against a State. For each controller it watches the
// inputs and turns their events into reconcile requests (a one-slot queue: requests
// coalesce), asks for one reconcile at every start, and restarts run() with
// exponential backoff (0.5 s, x1.5, at most 60 s) whenever it throws or returns; with
// resyncMs, one reconcile at least that often whatever the events.
// Controllers that watch the same input share one watch (shared-watches.ts). With `mirror` (a plugin's runtime,
// whose state is the engine across a socket) the kinds the controllers read are read from watches of them
// (mirrored-state.ts).
import { StateError } from '../state/errors.ts';
import { Histogram } from '../histogram.ts';
import type { State } from '../state/state.ts';
import { SharedWatches } from './shared-watches.ts';
import { MirroredState } from './mirrored-state.ts';
import type { Controller, ControllerLog, Input } from './contract.ts';
import { guardedState, type SpecNormalizer } from './guarded-state.ts';
import { msSinceStart } from '../monotonic.ts';

export interface RuntimeOptions {
  log: (controller: string) => ControllerLog;
  /** Brings a spec a controller writes to the form the state stores (so an unchanged spec is seen as unchanged). */
  normalize?: SpecNormalizer;
  backoff?: { initialMs: number; factor: number; maxMs: number };
  /**
   * A reconcile of every controller at least this often, event or not (none by default): what a level-triggered
   * controller does then is a no-op when nothing changed, and the bound on how long a lost wake-up can stall it.
   */
  resyncMs?: number;
  /** Read the kinds the controllers use from watches of them, not from the state at each read. */
  mirror?: boolean;
}

export interface ControllerStatus {
  name: string; running: boolean; restarts: number; lastError?: string; nextBackoffMs: number;
  /** Reconciles done (from next() returning to the next call of next()) and how long each took. */
  reconciles: Histogram;
}

interface Entry {
  controller: Controller; status: ControllerStatus; stop: () => void; done: Promise<void>;
  /** Settles when the controller's watches are set up (or could not be). */
  watching: Promise<void>;
}

export const DEFAULT_BACKOFF = { initialMs: 500, factor: 1.5, maxMs: 60_000 };

export class ControllerRuntime {
  private readonly entries = new Map<string, Entry>();
  private readonly exclusive = new Map<string, string>();
  private started = false;
  private readonly pending: Controller[] = [];
  private readonly watches: SharedWatches;
  /** What the controllers read and write through. */
  private readonly reader: State;

  constructor(private readonly state: State, private readonly o: RuntimeOptions) {
    this.watches = new SharedWatches(state, { mirror: !!o.mirror });
    this.reader = o.mirror ? new MirroredState(state, this.watches) : state;
  }

  /** Registers a controller; exclusive outputs may have only one controller. */
  register(c: Controller): void {
    if (this.entries.has(c.name) || this.pending.some((p) => p.name === c.name)) {
      throw new StateError('invalid-argument', `controller "${c.name}" registered twice`, c.name);
    }
    for (const out of c.outputs()) {
      const holder = this.exclusive.get(out.type);
      if (holder) {
        throw new StateError('invalid-argument',
          `controller "${c.name}": output ${out.type} is exclusive to "${holder}"`, out.type);
      }
      if (out.kind === 'exclusive') this.exclusive.set(out.type, c.name);
    }
    if (this.started) this.launch(c);
    else this.pending.push(c);
  }

  start(): void {
    this.started = true;
    for (const c of this.pending.splice(0)) this.launch(c);
  }

  /**
   * Resolves when every controller started so far watches its inputs: from then on no change to an input
   * goes unseen (a plugin says it is ready then). A controller whose watch failed to open counts as settled:
   * it says why in its log.
   */
  async watching(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.watching));
  }

  /** Watches open on the state (one per distinct input of all controllers). */
  get openWatches(): number { return this.watches.size; }

  statuses(): ControllerStatus[] { return [...this.entries.values()].map((e) => ({ ...e.status })); }

  async stop(): Promise<void> {
    for (const e of this.entries.values()) e.stop();
    await Promise.all([...this.entries.values()].map((e) => e.done));
    if (this.reader instanceof MirroredState) this.reader.close();
  }

  private launch(c: Controller): void {
    const log = this.o.log(c.name);
    const backoff = this.o.backoff ?? DEFAULT_BACKOFF;
    const abort = new AbortController();
    const status: ControllerStatus = {
      name: c.name, running: false, restarts: 0, nextBackoffMs: backoff.initialMs, reconciles: new Histogram(),
    };
    let reconciling: number | undefined; // when the reconcile under way started
    let requested = true; // one reconcile at start
    let wake: (() => void) | null = null;
    const request = () => {
      requested = true;
      const w = wake;
      wake = null;
      w?.();
    };
    const resync = this.o.resyncMs ? setInterval(request, this.o.resyncMs) : undefined;
    resync?.unref();
    abort.signal.addEventListener('abort', () => {
      clearInterval(resync);
      const w = wake;
      wake = null;
      w?.();
    });

    const ctx = {
      state: guardedState(this.reader, c, this.o.normalize),
      log,
      signal: abort.signal,
      requestReconcile: request,
      async next(): Promise<boolean> {
        if (reconciling !== undefined) status.reconciles.observe((msSinceStart() - reconciling) / 1000);
        reconciling = undefined;
        while (!requested && !abort.signal.aborted) await new Promise<void>((r) => {
          wake = r;
        });
        if (abort.signal.aborted) return false;
        requested = false;
        reconciling = msSinceStart();
        return true;
      },
    };

    // Every input's watch at once (each is a round trip to the state), shared with other controllers. When mirroring,
    // an input of one resource is woken by its kind's watch, the one its reads come from (a watch of its own could
    // wake it before the mirror has the change).
    const watched = (input: Input) => (this.o.mirror && input.id !== undefined
      ? { namespace: input.namespace, type: input.type } : input);
    const subscribed = Promise.allSettled(c.inputs().map((input) => {
      const target = watched(input);
      const whole = target !== input;
      return this.watches.subscribe(target, (all, resync) => {
        // A mirror's watch also says when its bootstrap is in, or that it fell behind: the resync after its
        // new bootstrap is the one to act on.
        const events = all.filter((e) => e.type !== 'bootstrapped' && e.type !== 'errored'
          && (!whole || e.resource.metadata.id === input.id));
        if (events.length < all.length && !events.length && !resync) return;
        const relevant = resync || input.kind !== 'destroy-ready' || events.some((e) =>
          e.resource.metadata.phase === 'tearingDown' && e.resource.metadata.finalizers.length === 0);
        if (relevant) request();
      });
    })).then((results) => {
      const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        for (const u of ok) u();
        throw failed.reason;
      } // all inputs or none
      return ok;
    });
    const done = (async () => {
      const unsubscribe = await subscribed;
      let delay = backoff.initialMs;
      while (!abort.signal.aborted) {
        status.running = true;
        const t0 = Date.now();
        try {
          await c.run(ctx);
          if (abort.signal.aborted) break;
          status.lastError = 'run returned';
          log.warn('run returned while the runtime is up; restarting');
        } catch (e) {
          reconciling = undefined; // a reconcile that threw is counted as a restart, not as a reconcile
          if (abort.signal.aborted) break;
          status.lastError = (e as Error).message;
          log.error(`crashed: ${(e as Error).stack ?? e}`);
        }
        status.running = false;
        // A run that lasted longer than the longest wait was healthy: start the backoff over.
        if (Date.now() - t0 > backoff.maxMs) delay = backoff.initialMs;
        status.nextBackoffMs = delay;
        await new Promise<void>((r) => {
          const timer = setTimeout(r, delay);
          abort.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            r();
          }, { once: true });
        });
        delay = Math.min(delay * backoff.factor, backoff.maxMs);
        status.restarts++;
        requested = true;
      }
      status.running = false;
      for (const u of unsubscribe) u();
    })().catch((e) => log.error(`cannot start: ${(e as Error).message}`));

    this.entries.set(c.name, {
      controller: c, status, stop: () => abort.abort(), done,
      watching: subscribed.then(() => undefined, () => undefined),
    });
  }
}
