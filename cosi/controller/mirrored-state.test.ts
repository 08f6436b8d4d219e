// Mirrored reads on a real memory state: reads of a watched kind come from its watch; a read after a write waits for
// the write's own event (before or after its answer), a refused write for what refused it; a destroy and a create
// of one id are told apart; a kind read unwatched is watched from then on; a mirror that ended or fell behind is
// not read until its new bootstrap; a subscriber never waits for a bootstrap; the runtime reads through mirrors.
import t from 'tap';
import { MemoryState } from '../state/memory-state.ts';
import { newResource, type Resource } from '../resource/resource.ts';
import type { State, WatchEvent, WatchSink } from '../state/state.ts';
import { SharedWatches } from './shared-watches.ts';
import { EXPIRE_MS, MirroredState, WAIT_MS } from './mirrored-state.ts';
import { ControllerRuntime } from './runtime.ts';
import type { Controller } from './contract.ts';

const NS = 'default';
const A = 'Sources.test.appliance.dev';
const B = 'Targets.test.appliance.dev';
const settle = () => new Promise((r) => setTimeout(r, 20));
const ids = (rs: readonly Resource[]) => rs.map((r) => r.metadata.id);

/**
 * The state with its watches' events held back while `hold` is set (as events in flight on a socket), handed out
 * as copies (not frozen, as a socket's are), and its reads counted.
 */
function laggingState(now?: () => number) {
  const state = new MemoryState(now ? { now } : {});
  const held: { sink: WatchSink; events: readonly WatchEvent[] }[] = [];
  const lag = { hold: false, reads: 0 };
  /** Delivers what was held back, the first `n` batches only if given. */
  const release = async (n = Infinity) => {
    lag.hold = false;
    for (const h of held.splice(0, n)) await h.sink(h.events);
    if (held.length) lag.hold = true;
  };
  const lagging = Object.assign(Object.create(state) as State, {
    watch: ((req, opts, sink, showAll) => state.watch(req, opts, (frozen) => {
      const events = frozen.map((e) => ({ ...e, resource: structuredClone(e.resource) }));
      if (!lag.hold) return sink(events);
      held.push({ sink, events });
      return undefined;
    }, showAll)) satisfies State['watch'],
    get: (p: Parameters<State['get']>[0]) => {
      lag.reads++;
      return state.get(p);
    },
    list: (k: Parameters<State['list']>[0], f?: Parameters<State['list']>[1]) => {
      lag.reads++;
      return state.list(k, f);
    },
  });
  return { state, lagging, lag, release };
}

async function mirroredOn(lagging: State, now?: () => number) {
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches, now);
  await watches.subscribe({ namespace: NS, type: A }, () => {});
  await settle();
  return { watches, mirrored };
}

t.test('reads of a watched kind come from its mirror, filtered and sorted as the state lists them', async (t) => {
  const { state, lagging, lag } = laggingState();
  for (const [id, tier] of [['b', 'gold'], ['a', 'tin'], ['c', 'gold']] as const) {
    const r = newResource({ namespace: NS, type: A, id }, { n: 1 });
    r.metadata.labels = { tier };
    await state.create(r);
  }
  const { mirrored } = await mirroredOn(lagging);
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['a', 'b', 'c'], 'the bootstrap is in');
  t.same(ids(await mirrored.list({ namespace: NS, type: A },
    { labelQueries: [{ terms: [{ key: 'tier', op: 'equal', value: ['gold'] }] }] })), ['b', 'c']);
  t.same((await mirrored.get({ namespace: NS, type: A, id: 'b' })).spec, { n: 1 });
  await t.rejects(mirrored.get({ namespace: NS, type: A, id: 'zz' }), { code: 'not-found' });
  await state.destroy({ namespace: NS, type: A, id: 'a' });
  await settle();
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['b', 'c'], 'a change comes by the watch');
  t.equal(lag.reads, 0, 'the state was not read');
  t.same(mirrored.reads, { mirror: 5, state: 0 });
  const got = await mirrored.get({ namespace: NS, type: A, id: 'b' });
  const change = () => {
    (got.spec as { n: number }).n = 2;
  };
  t.throws(change, TypeError, 'what the mirror hands out is frozen (the watch handed out copies)');
});

t.test('a read after a write waits for the write\'s event, in the mirror', async (t) => {
  const { lagging, lag, release } = laggingState();
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  const made = await mirrored.create(newResource({ namespace: NS, type: A, id: 'x' }, { n: 1 }));
  const listed = mirrored.list({ namespace: NS, type: A });
  await settle();
  await release();
  t.same(ids(await listed), ['x'], 'the read waited for the event');
  lag.hold = true;
  await mirrored.update({ ...made, spec: { n: 2 } });
  const got = mirrored.get({ namespace: NS, type: A, id: 'x' });
  await release();
  t.same((await got).spec, { n: 2 });
  lag.hold = true;
  await mirrored.destroy({ namespace: NS, type: A, id: 'x' });
  const after = mirrored.get({ namespace: NS, type: A, id: 'x' });
  await release();
  await t.rejects(after, { code: 'not-found' }, 'gone once its destroyed event came');
  t.equal(lag.reads, 0, 'every read was the mirror\'s');
});

t.test('a read whose write\'s event does not come in WAIT_MS asks the state', async (t) => {
  const { lagging, lag } = laggingState();
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'slow' }, { n: 1 }));
  const t0 = performance.now();
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['slow']);
  t.ok(performance.now() - t0 >= WAIT_MS - 20, 'after waiting');
  t.equal(lag.reads, 1, 'from the state');
});

t.test('a write whose event came before its answer is read from the mirror at once', async (t) => {
  const { state, lagging, lag } = laggingState();
  const watches = new SharedWatches(lagging, { mirror: true });
  await watches.subscribe({ namespace: NS, type: A }, () => {});
  const slowAnswers = Object.assign(Object.create(lagging) as State, {
    create: async (r: Resource, o?: { owner?: string }) => {
      const out = await state.create(r, o);
      await settle(); // the event is delivered meanwhile
      return out;
    },
  });
  const mirrored = new MirroredState(slowAnswers, watches);
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'y' }, { n: 1 }));
  const t0 = performance.now();
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['y']);
  t.ok(performance.now() - t0 < WAIT_MS / 2, 'without waiting');
  t.equal(lag.reads, 0, 'the event counted though it came first');
});

t.test('a destroy and a create of one id: the create waits for its own event, not the destroy\'s', async (t) => {
  const { state, lagging, lag, release } = laggingState();
  await state.create(newResource({ namespace: NS, type: A, id: 'z' }, { n: 1 }));
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  await mirrored.destroy({ namespace: NS, type: A, id: 'z' });
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'z' }, { n: 2 }));
  const got = mirrored.get({ namespace: NS, type: A, id: 'z' });
  await release(1); // the destroyed event only
  await settle();
  await release();
  t.same((await got).spec, { n: 2 }, 'not "not found" between the two events');
  t.equal(lag.reads, 0);
});

t.test('a refused write waits for what refused it', async (t) => {
  const { state, lagging, lag, release } = laggingState();
  const { mirrored } = await mirroredOn(lagging);
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'v' }, { n: 1 }));
  await settle();
  lag.hold = true;
  const cur = await state.get({ namespace: NS, type: A, id: 'v' });
  await state.update({ ...cur, spec: { n: 5 } }); // another writer; its event is in flight
  const stale = await mirrored.get({ namespace: NS, type: A, id: 'v' });
  t.same(stale.spec, { n: 1 }, 'the mirror is behind');
  await t.rejects(mirrored.update({ ...stale, spec: { n: 2 } }), { code: 'version-conflict' });
  const fresh = mirrored.get({ namespace: NS, type: A, id: 'v' });
  await settle();
  await release();
  t.same((await fresh).spec, { n: 5 }, 'the read waited for the newer version');
  await t.rejects(mirrored.destroy({ namespace: NS, type: A, id: 'never' }), { code: 'not-found' });
  const t0 = performance.now();
  await mirrored.list({ namespace: NS, type: A });
  t.ok(performance.now() - t0 < WAIT_MS / 2, 'a refusal the mirror shows already is not waited for');
  t.equal(lag.reads, 0);
});

t.test('a write whose event never comes is let go after EXPIRE_MS', async (t) => {
  const { lagging, lag } = laggingState();
  let now = 1_000;
  const { mirrored } = await mirroredOn(lagging, () => now);
  lag.hold = true;
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'lost' }, { n: 1 }));
  now += EXPIRE_MS + 1;
  const t0 = performance.now();
  t.same(await mirrored.list({ namespace: NS, type: A }), [], 'the mirror answers, as it has it');
  t.ok(performance.now() - t0 < WAIT_MS / 2, 'without waiting');
  t.equal(lag.reads, 0);
});

t.test('a kind read that nobody watches is watched from that read on, and let go on close', async (t) => {
  const { state, lagging, lag } = laggingState();
  await state.create(newResource({ namespace: NS, type: B, id: 'q' }, { n: 1 }));
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches);
  t.same(ids(await mirrored.list({ namespace: NS, type: B })), ['q']);
  t.equal(lag.reads, 1, 'the first read asks the state');
  await settle();
  t.equal(watches.size, 1, 'and opens a watch of the kind');
  t.same(ids(await mirrored.list({ namespace: NS, type: B })), ['q']);
  t.equal(lag.reads, 1, 'the next read is the mirror\'s');
  mirrored.close();
  await settle();
  t.equal(watches.size, 0);
});

/** The state, its first watch of A ending (as an overrun ends it) when `end` is called. */
function endingState(lagging: State) {
  let first = true;
  const ending = { end: () => {} };
  const state = Object.assign(Object.create(lagging) as State, {
    watch: (async (req, opts, sink, showAll) => {
      const w = await lagging.watch(req, opts, sink, showAll);
      if (!first) return w;
      first = false;
      const done = new Promise<Error | undefined>((r) => {
        ending.end = () => {
          w.close();
          r(new Error('buffer overrun'));
        };
      });
      return { close: w.close, done };
    }) satisfies State['watch'],
  });
  return { state, ending };
}

t.test('a watch that ended is rebuilt from a new bootstrap, read only then; its subscribers look again', async (t) => {
  const { state, lagging } = laggingState();
  const { state: ends, ending } = endingState(lagging);
  const watches = new SharedWatches(ends, { mirror: true });
  const mirrored = new MirroredState(ends, watches);
  const resyncs: boolean[] = [];
  const unsubscribe = await watches.subscribe({ namespace: NS, type: A }, (_e, resync) => {
    if (resync) resyncs.push(resync);
  });
  await state.create(newResource({ namespace: NS, type: A, id: 'before' }, { n: 1 }));
  await settle();
  ending.end();
  await state.create(newResource({ namespace: NS, type: A, id: 'unseen' }, { n: 1 }));
  await settle();
  t.notOk(watches.mirrorOf(NS, A)?.isReady, 'not ready while it is rebuilt');
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['before', 'unseen'], 'a read waits for it');
  await settle();
  t.same(resyncs, [true], 'the subscriber was told to look again');
  unsubscribe();
  await settle();
  t.equal(watches.size, 0, 'the watch opened again is closed by the last to leave');
});

t.test('an errored event (fallen behind) makes the mirror wait for its rebuild', async (t) => {
  const { lagging } = laggingState();
  const { watches } = await mirroredOn(lagging);
  const m = watches.mirrorOf(NS, A)!;
  t.ok(m.isReady);
  m.apply([{ type: 'errored', resource: newResource({ namespace: NS, type: A, id: '' }, {}), error: 'overrun' }]);
  t.notOk(m.isReady);
});

t.test('a subscriber does not wait for a bootstrap that never comes; reads then ask the state', async (t) => {
  const { state, lagging, lag } = laggingState();
  await state.create(newResource({ namespace: NS, type: A, id: 'p' }, { n: 1 }));
  lag.hold = true; // the bootstrap is held back for good
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches);
  const subscribed = await Promise.race([watches.subscribe({ namespace: NS, type: A }, () => {}).then(() => true),
    new Promise((r) => setTimeout(() => r(false), 200))]);
  t.ok(subscribed, 'subscribed without the bootstrap');
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['p']);
  t.equal(lag.reads, 1, 'after WAIT_MS, from the state');
});

t.test('a runtime that mirrors: controllers read inputs and their outputs from mirrors and keep them right',
  async (t) => {
    const { state, lagging, lag, release } = laggingState();
    const copier: Controller = {
      name: 'copier', inputs: () => [{ namespace: NS, type: A, kind: 'weak' }],
      outputs: () => [{ type: B, kind: 'exclusive' }],
      async run(ctx) {
        while (await ctx.next()) {
          const sources = await ctx.state.list({ namespace: NS, type: A });
          for (const s of sources) await ctx.state.put({ namespace: NS, type: B, id: s.metadata.id }, s.spec);
          await ctx.state.cleanup({ namespace: NS, type: B }, new Set(ids(sources)));
        }
      },
    };
    const runtime = new ControllerRuntime(lagging, { log: () => ({ info() {}, warn() {}, error() {} }), mirror: true });
    runtime.register(copier);
    runtime.start();
    await runtime.watching();
    for (const id of ['a', 'b', 'c']) await state.create(newResource({ namespace: NS, type: A, id }, { n: id }));
    await new Promise((r) => setTimeout(r, 200));
    // Its writes' events held back a while: its next reconciles read what it wrote all the same.
    lag.hold = true;
    setTimeout(() => void release(), 100);
    const a = await state.get({ namespace: NS, type: A, id: 'a' });
    await state.update({ ...a, spec: { n: 'A' } });
    await state.destroy({ namespace: NS, type: A, id: 'b' });
    await new Promise((r) => setTimeout(r, 200));
    const out = await state.list({ namespace: NS, type: B });
    t.same(out.map((r) => [r.metadata.id, r.spec]), [['a', { n: 'A' }], ['c', { n: 'c' }]]);
    const readsOfState = lag.reads - 1; // that list
    t.ok(readsOfState <= 2, `the state was read ${readsOfState} times (the first reads of the output kind)`);
    await runtime.stop();
  });

t.test('incarnations of one id in one millisecond are told apart', async (t) => {
  const { lagging, lag, release } = laggingState(() => 5_000);
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'i' }, { n: 1 }));
  await mirrored.destroy({ namespace: NS, type: A, id: 'i' });
  const again = await mirrored.create(newResource({ namespace: NS, type: A, id: 'i' }, { n: 2 }));
  t.ok(again.metadata.created > 5_000, 'a later created time than the first incarnation\'s, the clock standing');
  const got = mirrored.get({ namespace: NS, type: A, id: 'i' });
  await release(2); // the first incarnation's created and destroyed events
  await settle();
  await release();
  t.same((await got).spec, { n: 2 });
  t.equal(lag.reads, 0);
});

t.test('what the state answered after a wait is what the next read shows at least', async (t) => {
  const { state, lagging, lag, release } = laggingState();
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'mine' }, { n: 1 }));
  await state.create(newResource({ namespace: NS, type: A, id: 'theirs' }, { n: 1 }));
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['mine', 'theirs'], 'the state answered');
  const next = mirrored.list({ namespace: NS, type: A });
  await release(1); // only mine's event
  await settle();
  await release();
  t.same(ids(await next), ['mine', 'theirs'], 'not back in time');
  t.equal(lag.reads, 1);
});

t.test('a destroy the bootstrap of a late watch no longer has is not waited for', async (t) => {
  const { state, lagging } = laggingState();
  await state.create(newResource({ namespace: NS, type: B, id: 'out' }, { n: 1 }));
  const late = Object.assign(Object.create(lagging) as State, {
    watch: (async (req, opts, sink, showAll) => {
      await new Promise((r) => setTimeout(r, 50)); // the engine sets watches up in turns
      return lagging.watch(req, opts, sink, showAll);
    }) satisfies State['watch'],
  });
  const watches = new SharedWatches(late, { mirror: true });
  const mirrored = new MirroredState(late, watches);
  t.same(ids(await mirrored.list({ namespace: NS, type: B })), ['out'], 'the first read opens a watch');
  await mirrored.teardown({ namespace: NS, type: B, id: 'out' });
  await mirrored.destroy({ namespace: NS, type: B, id: 'out' });
  await new Promise((r) => setTimeout(r, 100));
  const t0 = performance.now();
  t.same(await mirrored.list({ namespace: NS, type: B }), []);
  t.ok(performance.now() - t0 < WAIT_MS / 2, 'without waiting');
  t.equal(mirrored.reads.mirror, 1);
});

t.test('teardown: awaited when it changes the phase, not when the mirror shows it tearing down', async (t) => {
  const { state, lagging, lag, release } = laggingState();
  await state.create(newResource({ namespace: NS, type: A, id: 'td' }, { n: 1 }));
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  t.equal(await mirrored.teardown({ namespace: NS, type: A, id: 'td' }), true);
  const got = mirrored.get({ namespace: NS, type: A, id: 'td' });
  await settle();
  await release();
  t.equal((await got).metadata.phase, 'tearingDown', 'the read waited for the phase');
  lag.hold = true;
  await mirrored.teardown({ namespace: NS, type: A, id: 'td' }); // no change, no event
  const t0 = performance.now();
  await mirrored.get({ namespace: NS, type: A, id: 'td' });
  t.ok(performance.now() - t0 < WAIT_MS / 2, 'nothing awaited');
  t.equal(lag.reads, 0);
});

t.test('a refused create (already there) waits for the mirror to have it', async (t) => {
  const { state, lagging, lag, release } = laggingState();
  const { mirrored } = await mirroredOn(lagging);
  lag.hold = true;
  await state.create(newResource({ namespace: NS, type: A, id: 'ae' }, { n: 7 }));
  await t.rejects(mirrored.create(newResource({ namespace: NS, type: A, id: 'ae' }, { n: 1 })),
    { code: 'already-exists' });
  const got = mirrored.get({ namespace: NS, type: A, id: 'ae' });
  await settle();
  await release();
  t.same((await got).spec, { n: 7 });
  t.equal(lag.reads, 0);
});

t.test('an input of one resource wakes its controller once the mirror has the change', async (t) => {
  const { state, lagging } = laggingState();
  await state.create(newResource({ namespace: NS, type: A, id: 'one' }, { n: 1 }));
  await state.create(newResource({ namespace: NS, type: A, id: 'other' }, { n: 1 }));
  const seen: unknown[] = [];
  const reader: Controller = {
    name: 'reader', inputs: () => [{ namespace: NS, type: A, id: 'one', kind: 'weak' }], outputs: () => [],
    async run(ctx) {
      while (await ctx.next()) seen.push((await ctx.state.get({ namespace: NS, type: A, id: 'one' })).spec);
    },
  };
  const runtime = new ControllerRuntime(lagging, { log: () => ({ info() {}, warn() {}, error() {} }), mirror: true });
  runtime.register(reader);
  runtime.start();
  await runtime.watching();
  await settle();
  const other = await state.get({ namespace: NS, type: A, id: 'other' });
  await state.update({ ...other, spec: { n: 9 } });
  await settle();
  t.same(seen, [{ n: 1 }], 'another resource of the kind does not wake it');
  const one = await state.get({ namespace: NS, type: A, id: 'one' });
  await state.update({ ...one, spec: { n: 2 } });
  await settle();
  t.same(seen, [{ n: 1 }, { n: 2 }], 'its own does, and the read sees the change');
  await runtime.stop();
});

t.test('writes before a kind\'s first read are not waited for by the reads after it', async (t) => {
  const { lagging } = laggingState();
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches);
  await mirrored.create(newResource({ namespace: NS, type: B, id: 'x' }, { n: 1 }));
  await mirrored.destroy({ namespace: NS, type: B, id: 'x' });
  await mirrored.create(newResource({ namespace: NS, type: B, id: 'y' }, { n: 1 }));
  t.same(ids(await mirrored.list({ namespace: NS, type: B })), ['y'], 'the first read, from the state');
  const t0 = performance.now();
  t.same(ids(await mirrored.list({ namespace: NS, type: B })), ['y']);
  t.ok(performance.now() - t0 < WAIT_MS / 2, 'the next, from the mirror at once');
  t.same(mirrored.reads, { mirror: 1, state: 1 });
});

t.test('a write answered after a watch was asked for, before its snapshot\'s events came: its event is awaited',
  async (t) => {
    const { state, lagging, lag, release } = laggingState();
    await state.create(newResource({ namespace: NS, type: B, id: 'u' }, { n: 1 }));
    const watches = new SharedWatches(lagging, { mirror: true });
    const mirrored = new MirroredState(lagging, watches);
    lag.hold = true; // the bootstrap (of v1) is in flight
    await mirrored.list({ namespace: NS, type: B }); // from the state; asks for a watch
    const cur = await state.get({ namespace: NS, type: B, id: 'u' });
    await mirrored.update({ ...cur, spec: { n: 2 } });
    const got = mirrored.get({ namespace: NS, type: B, id: 'u' });
    await settle();
    await release();
    t.same((await got).spec, { n: 2 }, 'not the bootstrap\'s v1');
  });

t.test('a subscriber that comes while an ended watch is retried is not refused', async (t) => {
  const { state, lagging } = laggingState();
  let calls = 0;
  let end!: () => void;
  const flaky = Object.assign(Object.create(lagging) as State, {
    watch: (async (req, opts, sink, showAll) => {
      calls++;
      if (calls === 2) throw new Error('the engine is away');
      const w = await lagging.watch(req, opts, sink, showAll);
      if (calls > 1) return w;
      const done = new Promise<Error | undefined>((r) => {
        end = () => {
          w.close();
          r(new Error('cut'));
        };
      });
      return { close: w.close, done };
    }) satisfies State['watch'],
  });
  const watches = new SharedWatches(flaky, { mirror: true });
  await watches.subscribe({ namespace: NS, type: A }, () => {});
  end();
  await new Promise((r) => setTimeout(r, 150)); // the first reopen has failed; the next is waited for
  t.equal(calls, 2);
  const resyncs: boolean[] = [];
  await watches.subscribe({ namespace: NS, type: A }, (_e, resync) => {
    if (resync) resyncs.push(resync);
  });
  t.pass('subscribed while it is retried');
  await state.create(newResource({ namespace: NS, type: A, id: 'later' }, { n: 1 }));
  await new Promise((r) => setTimeout(r, 400));
  t.equal(calls, 3, 'opened again');
  t.same(resyncs, [true], 'and the newcomer was told to look');
  t.same(watches.mirrorOf(NS, A)?.sorted().map((r) => r.metadata.id), ['later']);
});
