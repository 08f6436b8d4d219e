import t from 'tap';
import { runStateSuite } from '../conformance/state-suite.ts';
import { collect } from '../conformance/collector.ts';
import { newResource } from '../resource/resource.ts';
import { MemoryState } from './memory-state.ts';

runStateSuite(t, async () => ({ state: new MemoryState(), close: async () => {} }));

t.test('a watcher that falls behind the history gets buffer overrun and ends', async (t) => {
  const s = new MemoryState({ historyCapacity: 8 });
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const seen: string[] = [];
  const w = await s.watch({ namespace: 'ns', type: 'T' }, {}, async (batch) => {
    seen.push(...batch.map((e) => e.type));
    await gate;
  }, true);
  for (let i = 0; i < 20; i++) await s.create(newResource({ namespace: 'ns', type: 'T', id: `r${i}` }, {}));
  release();
  const err = await w.done;
  t.match(err?.message, /buffer overrun/);
  t.equal(seen.at(-1), 'errored', 'errored event delivered last');
  // api_version 0: the same overrun ends the watch, but the errored event is hidden
  let release0!: () => void;
  const gate0 = new Promise<void>((r) => {
    release0 = r;
  });
  const seen0: string[] = [];
  const w0 = await s.watch({ namespace: 'ns', type: 'T' }, {}, async (b) => {
    seen0.push(...b.map((e) => e.type));
    await gate0;
  }, false);
  for (let i = 20; i < 40; i++) await s.create(newResource({ namespace: 'ns', type: 'T', id: `r${i}` }, {}));
  release0();
  t.match((await w0.done)?.message, /buffer overrun/);
  t.notOk(seen0.includes('errored'), 'api_version 0 hides errored');
  const w1 = await s.watch({ namespace: 'ns', type: 'T' }, {}, () => {}, false);
  w1.close();
  t.equal(await w1.done, undefined, 'closing ends without error');
});

t.test('stored resources are immutable and writers cannot reach them', async (t) => {
  const s = new MemoryState();
  const spec = { list: [1, 2] };
  const r = await s.create(newResource({ namespace: 'n', type: 'T', id: 'x' }, spec));
  spec.list.push(3);
  t.same((await s.get({ namespace: 'n', type: 'T', id: 'x' })).spec, { list: [1, 2] },
    'caller mutation after create does not leak in');
  t.throws(() => {
    (r.spec as { list: number[] }).list.push(4);
  }, 'stored spec is frozen');
  const c = await collect(s, { namespace: 'n', type: 'T', id: 'x' });
  t.equal((await c.next())[0]!.type, 'created');
  c.watch.close();
});

t.test('watchers are woken after the writer returns, never inside its call', async (t) => {
  const s = new MemoryState();
  const seen: string[] = [];
  await s.watch({ namespace: 'n', type: 'T' }, {}, (batch) => {
    seen.push(...batch.map((e) => e.resource.metadata.id));
  });
  const pending = s.create(newResource({ namespace: 'n', type: 'T', id: 'a' }, {}));
  t.same(seen, [], 'nothing delivered while create runs');
  await pending;
  await new Promise((r) => setImmediate(r));
  t.same(seen, ['a']);
});

t.test('a sink that throws, or whose promise rejects, ends the watch with its error', async (t) => {
  const s = new MemoryState();
  const thrower = await s.watch({ namespace: 'n', type: 'T' }, {}, () => {
    throw new Error('sink broke');
  });
  const rejecter = await s.watch({ namespace: 'n', type: 'T' }, {}, async () => {
    throw new Error('sink rejected');
  });
  let later = 0;
  const bystander = await s.watch({ namespace: 'n', type: 'T' }, {}, () => {
    later++;
  });
  await s.create(newResource({ namespace: 'n', type: 'T', id: 'a' }, {}));
  t.match((await thrower.done)?.message, /sink broke/);
  t.match((await rejecter.done)?.message, /sink rejected/);
  await s.create(newResource({ namespace: 'n', type: 'T', id: 'b' }, {}));
  await new Promise((r) => setImmediate(r));
  t.equal(later, 2, 'other watchers are not disturbed');
  bystander.close();
  t.equal(await bystander.done, undefined);
});

t.test('countUnowned counts what users own as writes happen, as a walk of every resource would', async (t) => {
  const s = new MemoryState();
  const walk = (keep: (type: string) => boolean) =>
    s.resourcesWhere((r) => r.metadata.owner === '' && keep(r.metadata.type)).length;
  const all = () => true;
  const p = (type: string, id: string) => ({ namespace: 'ns', type, id });
  for (let i = 0; i < 5; i++) await s.create(newResource(p('A', `a${i}`), {}));
  for (let i = 0; i < 3; i++) await s.create(newResource(p('A', `owned${i}`), {}), { owner: 'ctrl' });
  for (let i = 0; i < 4; i++) await s.create(newResource(p('B', `b${i}`), {}));
  t.equal(s.countUnowned(all), 9, 'users\' resources of both types, not the controller\'s');
  t.equal(s.countUnowned((type) => type !== 'B'), 5, 'a type left out is not counted');
  const a0 = await s.get(p('A', 'a0'));
  await s.update({ ...a0, spec: { changed: true } });
  const o0 = await s.get(p('A', 'owned0'));
  await s.update({ ...o0, spec: { changed: true } }, { owner: 'ctrl' });
  t.equal(s.countUnowned(all), 9, 'updates change no count');
  await s.destroy(p('A', 'a1'));
  await s.destroy(p('A', 'owned1'), { owner: 'ctrl' });
  await s.teardownAndDestroy(p('B', 'b0'));
  t.equal(s.countUnowned(all), 7, 'destroyed resources leave the count');
  t.equal(s.countUnowned(all), walk(all), 'the same as a walk');
  t.equal(s.countUnowned((type) => type === 'A'), walk((type) => type === 'A'), 'per type too');
});
