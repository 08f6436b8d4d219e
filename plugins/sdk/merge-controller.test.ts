// The merge stage on the controller harness: what it writes, and that a wake rewrites only the keys whose sources
// or merged spec changed (each key used to be recomputed and compared on every wake).
import t, { type Test } from 'tap';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import type { Controller, ControllerContext } from '../../cosi/controller/contract.ts';
import { copyResource } from '../../cosi/state/freeze.ts';
import type { Layer } from '../../machinery/model/layers.ts';
import { mergeController, SOURCES_ANNOTATION } from './merge-controller.ts';

interface Decl { key: string; value: number; layer?: Layer }
const NS = 'test';
const decl = (id: string) => ({ namespace: NS, type: 'Decls', id });
const merged = (id: string) => ({ namespace: NS, type: 'Merged', id });
const KEYS = 30;

/** The merge controller, its `modify` calls counted by key. */
function counted() {
  const calls: string[] = [];
  const inner = mergeController<Decl>({
    name: 'test-merge', namespace: NS, inputType: 'Decls', outputType: 'Merged', combine: 'winner',
    key: (spec) => spec.key,
  });
  const c: Controller = {
    ...inner,
    run: (ctx) => {
      const state = { ...ctx.state, modify: ((p, init, mutate) => {
        calls.push(p.id);
        return ctx.state.modify(p, init, mutate);
      }) as typeof ctx.state.modify };
      return inner.run(Object.assign(Object.create(ctx) as ControllerContext, { state }));
    },
  };
  return { c, calls };
}

async function machine(t: Test) {
  const { c, calls } = counted();
  const h = await controllerHarness(t, [c]);
  for (let i = 0; i < KEYS; i++) await h.create<Decl>(decl(`d${i}`), { key: `k${i}`, value: i });
  await h.until(async () => (await h.ids({ namespace: NS, type: 'Merged' })).length, KEYS);
  // Settled: the finalizers added, every wake those caused taken.
  await h.until(async () => (await h.state.list({ namespace: NS, type: 'Decls' }))
    .every((r) => r.metadata.finalizers.includes('test-merge')), true);
  await new Promise((r) => setTimeout(r, 100));
  calls.length = 0;
  return { h, calls };
}

t.test('a changed source rewrites its key only', async (t) => {
  const { h, calls } = await machine(t);
  await h.update<Decl>(decl('d7'), { key: 'k7', value: 70 });
  t.same(await h.until(() => h.spec(merged('k7')), { key: 'k7', value: 70, layer: 'config' }),
    { key: 'k7', value: 70, layer: 'config' });
  await new Promise((r) => setTimeout(r, 100));
  t.same(calls, ['k7'], 'one modify, for k7 (not one per key)');
});

t.test('a second source of a key: the winner by layer, both named', async (t) => {
  const { h, calls } = await machine(t);
  await h.create<Decl>(decl('d7-default'), { key: 'k7', value: -7, layer: 'default' });
  await h.create<Decl>(decl('d8-config'), { key: 'k8', value: 80 });
  const sources = async (id: string) => (await h.state.get(merged(id))).metadata.annotations[SOURCES_ANNOTATION];
  t.equal(await h.until(() => sources('k8'), 'config:d8,config:d8-config'), 'config:d8,config:d8-config');
  t.same(await h.spec(merged('k8')), { key: 'k8', value: 8, layer: 'config' }, 'within a layer the lower id wins');
  const k7 = await h.state.get(merged('k7'));
  t.same(k7.spec, { key: 'k7', value: 7, layer: 'config' }, 'config beats default');
  t.equal(k7.metadata.annotations[SOURCES_ANNOTATION], 'config:d7,default:d7-default');
  await new Promise((r) => setTimeout(r, 100));
  t.same([...new Set(calls)].sort(), ['k7', 'k8'], 'the other keys untouched');
});

t.test('a merged spec changed behind the merge is written back', async (t) => {
  const { h } = await machine(t);
  const cur = copyResource(await h.state.get(merged('k3')));
  cur.spec = { key: 'k3', value: 999 };
  await h.state.update(cur, { owner: 'test-merge' });
  t.same(await h.until(() => h.spec(merged('k3')), { key: 'k3', value: 3, layer: 'config' }),
    { key: 'k3', value: 3, layer: 'config' });
});

t.test('a source removed and declared again with another value', async (t) => {
  const { h } = await machine(t);
  await h.remove(decl('d5'));
  t.equal(await h.until(() => h.spec(merged('k5')), undefined), undefined, 'its merged spec goes');
  await h.create<Decl>(decl('d5'), { key: 'k5', value: 55 });
  t.same(await h.until(() => h.spec(merged('k5')), { key: 'k5', value: 55, layer: 'config' }),
    { key: 'k5', value: 55, layer: 'config' });
});
