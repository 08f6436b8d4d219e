// Mirrored reads on a real memory state: reads of a watched kind come from its watch, a write is read back at
// once whether its event comes before or after its answer, a refused write sends reads to the state until the
// resource's next event, a kind read unwatched is watched from then on, and a rebuilt mirror is not read mid-way.
import t from 'tap';
import { MemoryState } from '../state/memory-state.ts';
import { newResource, type Resource } from '../resource/resource.ts';
import type { State, WatchEvent, WatchSink } from '../state/state.ts';
import { SharedWatches } from './shared-watches.ts';
import { EXPECT_MS, MirroredState } from './mirrored-state.ts';

const NS = 'default';
const A = 'Sources.test.appliance.dev';
const B = 'Targets.test.appliance.dev';
const settle = () => new Promise((r) => setTimeout(r, 20));
const ids = (rs: readonly Resource[]) => rs.map((r) => r.metadata.id);

/**
 * The state with its watches' events held back while `hold` is set (as events in flight on a socket), and its
 * reads counted.
 */
function laggingState() {
  const state = new MemoryState();
  const held: { sink: WatchSink; events: readonly WatchEvent[] }[] = [];
  const lag = { hold: false, reads: 0 };
  const release = async () => {
    lag.hold = false;
    for (const h of held.splice(0)) await h.sink(h.events);
  };
  const lagging = Object.assign(Object.create(state) as State, {
    watch: ((req, opts, sink, showAll) => state.watch(req, opts, (events) => {
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

t.test('reads of a watched kind come from its mirror, filtered and sorted as the state lists them', async (t) => {
  const { state, lagging, lag } = laggingState();
  for (const [id, tier] of [['b', 'gold'], ['a', 'tin'], ['c', 'gold']] as const) {
    const r = newResource({ namespace: NS, type: A, id }, { n: 1 });
    r.metadata.labels = { tier };
    await state.create(r);
  }
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches);
  await watches.subscribe({ namespace: NS, type: A }, () => {});
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
  t.throws(change, TypeError, 'what the mirror hands out is frozen');
});

t.test('a write is read back at once while its event is in flight, and from the mirror once it came', async (t) => {
  const { lagging, lag, release } = laggingState();
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches);
  await watches.subscribe({ namespace: NS, type: A }, () => {});
  lag.hold = true;
  const made = await mirrored.create(newResource({ namespace: NS, type: A, id: 'x' }, { n: 1 }));
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['x'], 'read from the state: the mirror lacks it');
  t.equal(lag.reads, 1);
  await mirrored.update({ ...made, spec: { n: 2 } });
  t.same((await mirrored.get({ namespace: NS, type: A, id: 'x' })).spec, { n: 2 });
  t.equal(lag.reads, 2);
  await release();
  t.same((await mirrored.get({ namespace: NS, type: A, id: 'x' })).spec, { n: 2 }, 'the mirror has both events');
  t.equal(lag.reads, 2, 'from the mirror now');
  lag.hold = true;
  await mirrored.destroy({ namespace: NS, type: A, id: 'x' });
  await t.rejects(mirrored.get({ namespace: NS, type: A, id: 'x' }), { code: 'not-found' }, 'gone at once');
  t.equal(lag.reads, 3);
  await release();
  t.same(await mirrored.list({ namespace: NS, type: A }), []);
  t.equal(lag.reads, 3);
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
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['y']);
  t.equal(lag.reads, 0, 'the event counted though it came first');
});

t.test('a refused write sends reads to the state until the resource changes again', async (t) => {
  const { state, lagging, lag, release } = laggingState();
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches);
  await watches.subscribe({ namespace: NS, type: A }, () => {});
  await mirrored.create(newResource({ namespace: NS, type: A, id: 'z' }, { n: 1 }));
  await settle();
  lag.hold = true;
  const cur = await state.get({ namespace: NS, type: A, id: 'z' });
  await state.update({ ...cur, spec: { n: 5 } }); // another writer; its event is in flight
  const stale = await mirrored.get({ namespace: NS, type: A, id: 'z' });
  t.same(stale.spec, { n: 1 }, 'the mirror is behind');
  await t.rejects(mirrored.update({ ...stale, spec: { n: 2 } }), { code: 'version-conflict' });
  t.same((await mirrored.get({ namespace: NS, type: A, id: 'z' })).spec, { n: 5 }, 'read from the state now');
  const before = lag.reads;
  await release();
  t.same((await mirrored.get({ namespace: NS, type: A, id: 'z' })).spec, { n: 5 });
  t.equal(lag.reads, before, 'and from the mirror once its event came');
});

t.test('a write whose event never comes is let go after EXPECT_MS', async (t) => {
  const { lagging, lag } = laggingState();
  let now = 1_000;
  const watches = new SharedWatches(lagging, { mirror: true });
  const mirrored = new MirroredState(lagging, watches, () => now);
  await watches.subscribe({ namespace: NS, type: A }, () => {});
  await t.rejects(mirrored.destroy({ namespace: NS, type: A, id: 'never' }), { code: 'not-found' });
  await mirrored.list({ namespace: NS, type: A });
  t.equal(lag.reads, 1, 'the refused destroy awaits an event of its resource');
  now += EXPECT_MS + 1;
  await mirrored.list({ namespace: NS, type: A });
  t.equal(lag.reads, 1, 'let go: the mirror answers');
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

t.test('a watch that ended is rebuilt from a new bootstrap, and not read from meanwhile', async (t) => {
  const { state, lagging } = laggingState();
  let first = true;
  let end!: () => void;
  const ending = Object.assign(Object.create(lagging) as State, {
    watch: (async (req, opts, sink, showAll) => {
      const w = await lagging.watch(req, opts, sink, showAll);
      if (!first) return w;
      first = false;
      const done = new Promise<Error | undefined>((r) => {
        end = () => {
          w.close();
          r(new Error('buffer overrun'));
        };
      });
      return { close: w.close, done };
    }) satisfies State['watch'],
  });
  const watches = new SharedWatches(ending, { mirror: true });
  const mirrored = new MirroredState(ending, watches);
  const resyncs: boolean[] = [];
  await watches.subscribe({ namespace: NS, type: A }, (_e, resync) => {
    if (resync) resyncs.push(resync);
  });
  await state.create(newResource({ namespace: NS, type: A, id: 'before' }, { n: 1 }));
  await settle();
  end();
  await state.create(newResource({ namespace: NS, type: A, id: 'unseen' }, { n: 1 }));
  await settle();
  t.equal(watches.mirrorOf(NS, A), undefined, 'no mirror while it is rebuilt');
  await new Promise((r) => setTimeout(r, 250));
  t.ok(watches.mirrorOf(NS, A), 'a mirror again');
  t.same(ids(await mirrored.list({ namespace: NS, type: A })), ['before', 'unseen'], 'with what came meanwhile');
  t.same(resyncs, [true], 'the subscriber was told to look again');
});
