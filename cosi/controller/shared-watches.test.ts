// Shared watches on a real memory state: one watch per target however many subscribe,
// every subscriber gets every event in order, the last to leave closes it, and a watch
// that cannot open fails its subscribers and is opened anew by the next.
import t from 'tap';
import { MemoryState } from '../state/memory-state.ts';
import { newResource } from '../resource/resource.ts';
import type { State, WatchEvent } from '../state/state.ts';
import { SharedWatches } from './shared-watches.ts';

const NS = 'default';
const A = 'Sources.test.appliance.dev';
const B = 'Targets.test.appliance.dev';
const settle = () => new Promise((r) => setTimeout(r, 20));
const ids = (seen: (readonly WatchEvent[])[]) => seen.flat().map((e) => `${e.type}:${e.resource.metadata.id}`);

/** The state, counting the watches it opened and closed. */
function countingState() {
  const state = new MemoryState();
  const counts = { opened: 0, closed: 0 };
  const watch: State['watch'] = async (req, opts, sink, showAll) => {
    const w = await state.watch(req, opts, sink, showAll);
    counts.opened++;
    return { done: w.done, close: () => {
      counts.closed++;
      w.close();
    } };
  };
  return { state, counting: Object.assign(Object.create(state) as State, { watch }), counts };
}

t.test('one watch per target; every subscriber sees every event, in order', async (t) => {
  const { state, counting, counts } = countingState();
  const shared = new SharedWatches(counting);
  const first: (readonly WatchEvent[])[] = [];
  const second: (readonly WatchEvent[])[] = [];
  const other: (readonly WatchEvent[])[] = [];
  const [u1, u2, u3] = await Promise.all([
    shared.subscribe({ namespace: NS, type: A }, (e) => first.push(e)),
    shared.subscribe({ namespace: NS, type: A }, (e) => second.push(e)),
    shared.subscribe({ namespace: NS, type: B }, (e) => other.push(e)),
  ]);
  t.equal(counts.opened, 2, 'two targets, two watches');
  t.equal(shared.size, 2);
  for (const id of ['x', 'y', 'z']) await state.create(newResource({ namespace: NS, type: A, id }, { n: 1 }));
  await state.destroy({ namespace: NS, type: A, id: 'y' });
  await settle();
  t.same(ids(first), ['created:x', 'created:y', 'created:z', 'destroyed:y']);
  t.same(ids(second), ids(first), 'the second subscriber saw the same');
  t.same(other, [], 'nothing on the other kind');
  u1!();
  t.equal(counts.closed, 0, 'still open while a subscriber is left');
  await state.create(newResource({ namespace: NS, type: A, id: 'w' }, { n: 1 }));
  await settle();
  t.same(ids(second).at(-1), 'created:w');
  t.notOk(ids(first).includes('created:w'), 'a subscriber that left gets nothing more');
  u2!();
  u2!(); // twice is harmless
  await settle();
  t.equal(counts.closed, 1, 'the last to leave closed it');
  t.equal(shared.size, 1);
  u3!();
  await settle();
  t.equal(counts.closed, 2);
  t.equal(shared.size, 0);
});

t.test('a watch that cannot open fails its subscribers; the next subscriber opens it anew', async (t) => {
  const state = new MemoryState();
  let refuse = true;
  const flaky = Object.assign(Object.create(state) as State, {
    watch: ((req, opts, sink, showAll) => (refuse ? Promise.reject(new Error('engine away'))
      : state.watch(req, opts, sink, showAll))) as State['watch'],
  });
  const shared = new SharedWatches(flaky);
  const results = await Promise.allSettled([
    shared.subscribe({ namespace: NS, type: A }, () => {}), shared.subscribe({ namespace: NS, type: A }, () => {}),
  ]);
  t.same(results.map((r) => r.status), ['rejected', 'rejected'], 'both waiting subscribers fail');
  t.match((results[0] as PromiseRejectedResult).reason, /engine away/);
  t.equal(shared.size, 0, 'nothing kept');
  refuse = false;
  const seen: (readonly WatchEvent[])[] = [];
  const u = await shared.subscribe({ namespace: NS, type: A }, (e) => seen.push(e));
  await state.create(newResource({ namespace: NS, type: A, id: 'x' }, { n: 1 }));
  await settle();
  t.same(ids(seen), ['created:x'], 'the new watch works');
  u();
});

t.test('a watch the state ends under its subscribers is opened again, and they are told to look again',
  async (t) => {
    const state = new MemoryState();
    const opened: { close(): void }[] = [];
    const ending: State['watch'] = async (req, opts, sink, showAll) => {
      const w = await state.watch(req, opts, sink, showAll);
      opened.push(w);
      return w;
    };
    const shared = new SharedWatches(Object.assign(Object.create(state) as State, { watch: ending }));
    const seen: (readonly WatchEvent[])[] = [];
    const resyncs: boolean[] = [];
    const stop = await shared.subscribe({ namespace: NS, type: A }, (e, resync) => {
      seen.push(e);
      if (resync) resyncs.push(true);
    });
    t.teardown(stop);
    opened[0]!.close(); // the state ends it (as a watcher fallen behind is ended), not the subscriber
    await state.create(newResource({ namespace: NS, type: A, id: 'missed' }, {}));
    for (let i = 0; i < 100 && !resyncs.length; i++) await settle();
    t.same(resyncs, [true], 'told to look again once it is open again');
    t.equal(opened.length, 2, 'opened again');
    await state.create(newResource({ namespace: NS, type: A, id: 'after' }, {}));
    await settle();
    t.same(ids(seen), ['created:after'], 'and events flow again (the one made meanwhile came as no event)');
    stop();
    opened[1]!.close();
    await new Promise((r) => setTimeout(r, 300));
    t.equal(opened.length, 2, 'a watch its last subscriber left is not opened again');
  });
