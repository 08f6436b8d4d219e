// Controller runtime tests on the controller harness: a real memory state, real
// controllers, converge-and-assert.
import t, { type Test } from 'tap';
import { controllerHarness } from '../conformance/controller-harness.ts';
import { until } from '../conformance/converge.ts';
import { newResource, type Resource } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import type { Controller, ControllerContext } from './contract.ts';
import { ControllerRuntime } from './runtime.ts';

const NS = 'default';
const A = 'Sources.test.appliance.dev';
const B = 'Targets.test.appliance.dev';
const fast = { initialMs: 20, factor: 1.5, maxMs: 200 };
const p = (type: string, id: string) => ({ namespace: NS, type, id });

/** For each A, a B with the doubled number; Bs without an A are cleaned up. */
function doubler(counter = { runs: 0 }): Controller {
  return {
    name: 'doubler',
    inputs: () => [{ namespace: NS, type: A, kind: 'weak' }],
    outputs: () => [{ type: B, kind: 'exclusive' }],
    async run(ctx: ControllerContext) {
      while (await ctx.next()) {
        counter.runs++;
        const keep = new Set<string>();
        for (const a of await ctx.state.list({ namespace: NS, type: A })) {
          keep.add(a.metadata.id);
          await ctx.state.modify(p(B, a.metadata.id), { n: 0 }, (r) => {
            r.spec.n = (a.spec as { n: number }).n * 2;
          });
        }
        await ctx.state.cleanup({ namespace: NS, type: B }, keep);
      }
    },
  };
}

async function setup(t: Test, ...controllers: Controller[]) {
  const h = await controllerHarness(t, controllers, { backoff: fast });
  return { state: h.state, rt: h.runtime };
}

t.test('outputs follow inputs: create, update, destroy', async (t) => {
  const { state } = await setup(t, doubler());
  await state.create(newResource(p(A, 'x'), { n: 2 }));
  await state.create(newResource(p(A, 'y'), { n: 5 }));
  const bs = async () => (await state.list({ namespace: NS, type: B }))
    .map((r) => [r.metadata.id, (r.spec as { n: number }).n, r.metadata.owner]);
  t.same(await until(bs, [['x', 4, 'doubler'], ['y', 10, 'doubler']]), [['x', 4, 'doubler'], ['y', 10, 'doubler']],
    'a B per A, owned by the controller');
  const x = await state.get(p(A, 'x'));
  await state.update({ ...x, spec: { n: 21 } });
  t.same(await until(async () => (await state.get(p(B, 'x'))).spec, { n: 42 }), { n: 42 }, 'update followed');
  await state.destroy(p(A, 'y'));
  t.same(await until(async () => (await state.list({ namespace: NS, type: B })).map((r) => r.metadata.id), ['x']),
    ['x'], 'destroy followed');
});

t.test('reconcile requests coalesce', async (t) => {
  const counter = { runs: 0 };
  const { state } = await setup(t, doubler(counter));
  let r: Resource = await state.create(newResource(p(A, 'c'), { n: 0 }));
  for (let i = 1; i <= 200; i++) r = await state.update({ ...r, spec: { n: i } });
  t.same(await until(async () => (await state.get(p(B, 'c'))).spec, { n: 400 }), { n: 400 }, 'last value wins');
  t.ok(counter.runs < 100, `200 updates took ${counter.runs} reconciles`);
});

t.test('writes outside the declared outputs are refused', async (t) => {
  const errors: string[] = [];
  const { state } = await setup(t, {
    name: 'rogue', inputs: () => [], outputs: () => [{ type: B, kind: 'shared' }],
    async run(ctx) {
      while (await ctx.next()) {
        try {
          await ctx.state.modify(p(A, 'stolen'), {});
        } catch (e) {
          errors.push((e as StateError).code);
        }
        try {
          await ctx.state.list({ namespace: NS, type: 'Undeclared.test.appliance.dev' });
        } catch (e) { errors.push((e as StateError).code); }
        try {
          await ctx.state.addFinalizer(p(B, 'x'));
        } catch (e) {
          errors.push((e as StateError).code);
        }
      }
    },
  });
  const want = ['permission-denied', 'permission-denied', 'permission-denied'];
  t.same(await until(() => errors.slice(0, 3), want), want, 'foreign write, undeclared read, finalizer on a non-input');
  await t.rejects(state.get(p(A, 'stolen')), { code: 'not-found' });
});

t.test('a crashing controller is restarted with growing backoff, and recovers', async (t) => {
  const starts: number[] = [];
  const { state, rt } = await setup(t, {
    name: 'flaky', inputs: () => [], outputs: () => [{ type: B, kind: 'exclusive' }],
    async run(ctx) {
      starts.push(Date.now());
      if (starts.length <= 4) throw new Error(`crash ${starts.length}`);
      while (await ctx.next()) await ctx.state.modify(p(B, 'ok'), { n: starts.length });
    },
  });
  t.same(await until(async () => (await state.get(p(B, 'ok'))).spec, { n: 5 }), { n: 5 }, 'the fifth start works');
  const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
  t.ok(gaps[0]! >= 15, `first retry after ~20ms (${gaps[0]}ms)`);
  t.ok(gaps[3]! > gaps[0]!, `backoff grows: ${gaps.join(', ')}ms`);
  const st = rt.statuses().find((s) => s.name === 'flaky')!;
  t.equal(st.restarts, 4);
  t.equal(st.lastError, 'crash 4');
  t.ok(st.running);
});

t.test('exclusive outputs have one controller', async (t) => {
  const { rt } = await setup(t, doubler());
  t.throws(() => rt.register({ ...doubler(), name: 'second' }), /exclusive to "doubler"/);
  t.throws(() => rt.register(doubler()), /registered twice/);
});

t.test('teardown pattern: finalizer on a strong input, outputs torn down first', async (t) => {
  const { state } = await setup(t, {
    name: 'holder',
    inputs: () => [{ namespace: NS, type: A, kind: 'strong' }, { namespace: NS, type: B, kind: 'destroy-ready' }],
    outputs: () => [{ type: B, kind: 'exclusive' }],
    async run(ctx) {
      while (await ctx.next()) {
        for (const a of await ctx.state.list({ namespace: NS, type: A })) {
          const id = a.metadata.id;
          if (a.metadata.phase === 'running') {
            if (!a.metadata.finalizers.includes('holder')) await ctx.state.addFinalizer(p(A, id));
            await ctx.state.modify(p(B, id), { from: id });
            continue;
          }
          const b = await ctx.state.find(p(B, id));
          if (b && !(await ctx.state.teardown(p(B, id)))) continue; // B has finalizers of its own: wait
          if (b) await ctx.state.destroy(p(B, id));
          await ctx.state.removeFinalizer(p(A, id));
        }
      }
    },
  });
  await state.create(newResource(p(A, 'td'), {}));
  t.same(await until(async () => {
    await state.get(p(B, 'td'));
    return (await state.get(p(A, 'td'))).metadata.finalizers;
  }, ['holder']), ['holder'], 'output exists, input held');
  await state.teardownAndDestroy(p(A, 'td'));
  await t.rejects(state.get(p(B, 'td')), { code: 'not-found' }, 'output destroyed before the input went');
  await t.rejects(state.get(p(A, 'td')), { code: 'not-found' });
});

t.test('controllers with the same input share one watch, and both wake on its events', async (t) => {
  const runs = { a: 0, b: 0 };
  const counter = (name: 'a' | 'b'): Controller => ({
    name: `counter-${name}`,
    inputs: () => [{ namespace: NS, type: A, kind: 'weak' }, { namespace: NS, type: A, id: 'one', kind: 'weak' }],
    outputs: () => [],
    async run(ctx: ControllerContext) { while (await ctx.next()) runs[name]++; },
  });
  const { state, rt } = await setup(t, counter('a'), counter('b'));
  await rt.watching();
  t.equal(rt.openWatches, 2, 'two distinct inputs, two watches for four subscriptions');
  const before = { ...runs };
  await state.create(newResource(p(A, 'one'), { n: 1 }));
  await until(() => runs.a > before.a && runs.b > before.b, true);
  t.pass('both controllers reconciled');
});

t.test('resyncMs: a reconcile at least that often, event or not; none after stop', async (t) => {
  let runs = 0;
  const idle: Controller = {
    name: 'idle', inputs: () => [], outputs: () => [],
    async run(ctx) {
      while (await ctx.next()) runs++;
    },
  };
  const h = await controllerHarness(t, [], { backoff: fast });
  const rt = new ControllerRuntime(h.state, { log: () => ({ info() {}, warn() {}, error() {} }), resyncMs: 40 });
  rt.register(idle);
  rt.start();
  await new Promise((r) => setTimeout(r, 300));
  await rt.stop();
  const atStop = runs;
  t.ok(atStop >= 4, `${atStop} reconciles in 300 ms with no event (one at start, then every 40 ms)`);
  await new Promise((r) => setTimeout(r, 150));
  t.equal(runs, atStop, 'none after stop');
});
