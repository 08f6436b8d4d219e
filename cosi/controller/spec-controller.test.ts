// The spec controller's own rules, with a real state and runtime (the plugins' spec controllers and the
// engine's extensions test what they apply): statuses in another namespace, progress written before apply
// returns, the finalizer held until undone, and TryAgain: tried again after its wait, not at every reconcile,
// at once when the spec changes.
import t from 'tap';
import { controllerHarness } from '../conformance/controller-harness.ts';
import { specController, TryAgain } from './spec-controller.ts';

interface Spec { value: string }
interface Status { state: string; value: string; error?: string }
const SPEC = { namespace: 'config', type: 'Things.test.dev' };
const STATUS = { namespace: 'runtime', type: 'ThingStatuses.test.dev' };
const TRIGGER = { namespace: 'runtime', type: 'Triggers.test.dev' };

function thing(o: { failures: number; applied: string[]; undone: string[] }, retry = { firstMs: 300, lastMs: 1000 }) {
  return specController<Spec, Status, void>({
    name: 'thing-spec', owner: 'engine', namespace: SPEC.namespace, specType: SPEC.type,
    statusNamespace: STATUS.namespace, statusType: STATUS.type,
    inputs: [{ ...TRIGGER, kind: 'weak' }],
    retry,
    observe: () => undefined,
    async apply(id, spec, prev, _world, ctx) {
      if (prev?.state === 'applied' && prev.value === spec.value) return prev;
      o.applied.push(`${id}=${spec.value}`);
      if (prev?.value !== spec.value) await ctx.report({ state: 'working', value: spec.value });
      if (spec.value.startsWith('flaky') && o.failures-- > 0) throw new TryAgain('the server is away');
      if (spec.value === 'bad') throw new Error('no such value');
      return { state: 'applied', value: spec.value };
    },
    failed: (_id, spec, _prev, error) => ({ state: 'failed', value: spec.value, error }),
    undo(id, prev) {
      o.undone.push(`${id}=${prev.value}`);
    },
  });
}

t.test('statuses in their own namespace; the finalizer is the owner\'s and held until undone', async (t) => {
  const seen = { failures: 0, applied: [] as string[], undone: [] as string[] };
  const h = await controllerHarness(t, [thing(seen)]);
  // Every status written, in order: the report while apply runs, then apply's result.
  const states: string[] = [];
  const w = await h.state.watch(STATUS, {}, (events) => {
    for (const e of events) {
      if (e.type === 'created' || e.type === 'updated') states.push((e.resource.spec as Status).state);
    }
  });
  t.teardown(() => w.close());
  await h.create({ ...SPEC, id: 'a' }, { value: 'one' });
  t.same(await h.until(() => h.spec({ ...STATUS, id: 'a' }), { state: 'applied', value: 'one' }),
    { state: 'applied', value: 'one' });
  t.same(states, ['working', 'applied'], 'the progress report, then the result');
  t.same((await h.state.get({ ...SPEC, id: 'a' })).metadata.finalizers, ['engine']);
  t.equal((await h.state.get({ ...STATUS, id: 'a' })).metadata.owner, 'engine');
  await h.remove({ ...SPEC, id: 'a' });
  t.same(seen.undone, ['a=one'], 'undone before the delete returned');
  t.equal(await h.spec({ ...STATUS, id: 'a' }), undefined);
});

t.test('an apply that throws an Error: its status says why', async (t) => {
  const h = await controllerHarness(t, [thing({ failures: 0, applied: [], undone: [] })]);
  await h.create({ ...SPEC, id: 'b' }, { value: 'bad' });
  const want = { state: 'failed', value: 'bad', error: 'no such value' };
  t.same(await h.until(() => h.spec({ ...STATUS, id: 'b' }), want), want);
});

t.test('TryAgain: failed with the wait said, tried again after it only, not at every reconcile', async (t) => {
  const seen = { failures: 2, applied: [] as string[], undone: [] as string[] };
  const h = await controllerHarness(t, [thing(seen)]);
  await h.create({ ...SPEC, id: 'c' }, { value: 'flaky' });
  const failed = { state: 'failed', value: 'flaky', error: 'the server is away (trying again in 0 s)' };
  t.same(await h.until(() => h.spec({ ...STATUS, id: 'c' }), failed), failed);
  const tries = seen.applied.length;
  // Other inputs wake the controller while it waits: the spec is not applied again for them.
  for (let i = 0; i < 5; i++) await h.create({ ...TRIGGER, id: `wake-${i}` }, {});
  await new Promise((r) => setTimeout(r, 100));
  t.equal(seen.applied.length, tries, 'reconciles during the wait do not apply it');
  // After 300 ms, then 600 ms: the third try succeeds.
  const applied = { state: 'applied', value: 'flaky' };
  t.same(await h.until(() => h.spec({ ...STATUS, id: 'c' }), applied, 5000), applied);
  t.same(seen.applied, ['c=flaky', 'c=flaky', 'c=flaky']);
});

t.test('TryAgain: a new spec while one waits is tried at once, not after the wait', async (t) => {
  // A wait far longer than a loaded host's delays: "at once" is told from "after the wait" with room on both sides.
  const seen = { failures: 1, applied: [] as string[], undone: [] as string[] };
  const h = await controllerHarness(t, [thing(seen, { firstMs: 20_000, lastMs: 20_000 })]);
  await h.create({ ...SPEC, id: 'd' }, { value: 'flaky-2' });
  const state = async () => ((await h.spec({ ...STATUS, id: 'd' })) as Status | undefined)?.state;
  const failed = await h.until(state, 'failed', 5000);
  t.equal(failed, 'failed', 'the first try failed, and waits 20 s');
  const started = Date.now();
  await h.update({ ...SPEC, id: 'd' }, { value: 'flaky-3' });
  const now = { state: 'applied', value: 'flaky-3' };
  t.same(await h.until(() => h.spec({ ...STATUS, id: 'd' }), now, 10_000), now);
  t.ok(Date.now() - started < 10_000, `the new spec applied at once (${Date.now() - started} ms)`);
  t.same(seen.applied, ['d=flaky-2', 'd=flaky-3']);
});
