// The request controller on the controller harness: a real memory state and runtime; the handlers are the test's.
import t from 'tap';
import { controllerHarness } from '../conformance/controller-harness.ts';
import { newResource } from '../resource/resource.ts';
import { requestController, type RequestHandling } from './request-controller.ts';

const REQUEST = { namespace: 'config', type: 'Jobs.test.appliance.dev' };
const STATUS = { namespace: 'runtime', type: 'JobStatuses.test.appliance.dev' };
const job = (id: string) => ({ ...REQUEST, id });

/** A handler whose jobs finish when the test says so. */
function jobs(oneAtATime: boolean, extra: Partial<RequestHandling<{ n: number }, object>> = {}) {
  const started: string[] = [];
  const withdrawn: string[] = [];
  const finish = new Map<string, () => void>();
  const controller = requestController<{ n: number }, object>({
    name: 'jobs', owner: 'engine', request: REQUEST, status: STATUS, oneAtATime,
    handle: (id) => {
      started.push(id);
      return new Promise<void>((r) => finish.set(id, r));
    },
    busy: (id, running) => ({ error: `${id}: job "${running}" is running` }),
    withdrawn: (id) => withdrawn.push(id),
    ...extra,
  });
  return { controller, started, withdrawn, finish: (id: string) => finish.get(id)!() };
}

t.test('each new request is handed over once; one there before the start is left alone', async (t) => {
  const h = await controllerHarness(t, [], { seed: [newResource(job('old'), { n: 0 })] });
  await new Promise((r) => setTimeout(r, 5));
  const j = jobs(false);
  h.runtime.register(j.controller);
  await h.create(job('a'), { n: 1 });
  await h.create(job('b'), { n: 2 });
  t.same(await h.until(() => [...j.started].sort(), ['a', 'b']), ['a', 'b'], 'both, at once (not one at a time)');
  await h.update(job('a'), { n: 3 });
  await new Promise((r) => setTimeout(r, 100));
  t.same([...j.started].sort(), ['a', 'b'], 'an update is no new request; "old" never ran');
  j.finish('a');
  await h.remove(job('a'));
  await h.create(job('a'), { n: 4 });
  t.same(await h.until(() => j.started.length, 3), 3, 'made again: acted on again');
  t.same(h.logged, []);
});

t.test('one at a time: a request that comes while another runs is refused in its status, owned by the owner',
  async (t) => {
    const j = jobs(true);
    const h = await controllerHarness(t, [j.controller]);
    await h.create(job('first'), { n: 1 });
    await h.until(() => j.started, ['first']);
    await h.create(job('second'), { n: 2 });
    t.same(await h.until(() => h.spec({ ...STATUS, id: 'second' }), { error: 'second: job "first" is running' }),
      { error: 'second: job "first" is running' });
    t.equal((await h.state.get({ ...STATUS, id: 'second' })).metadata.owner, 'engine');
    t.same(j.started, ['first'], 'the second never ran');
    j.finish('first');
    await new Promise((r) => setTimeout(r, 20));
    await h.create(job('third'), { n: 3 });
    t.same(await h.until(() => j.started, ['first', 'third']), ['first', 'third'], 'after it ends, the next runs');
  });

t.test('a request deleted while its handler runs is withdrawn; a failing handler is logged, the next runs',
  async (t) => {
    const calls: string[] = [];
    const j = jobs(true, {
      handle: async (id) => {
        calls.push(id);
        if (id === 'x') throw new Error(`job ${id} broke`);
      },
    });
    const h = await controllerHarness(t, [j.controller]);
    await h.create(job('x'), { n: 1 });
    t.match(await h.until(() => h.logged.length, 1), 1);
    t.match(h.logged[0], {
      level: 'error', controller: 'jobs', message: /Jobs\.test\.appliance\.dev "x": Error: job x broke/,
    });
    await h.create(job('x2'), { n: 2 });
    t.same(await h.until(() => calls, ['x', 'x2']), ['x', 'x2'], 'the one after the failed one runs');
    const k = jobs(true);
    const h2 = await controllerHarness(t, [k.controller]);
    await h2.create(job('y'), { n: 1 });
    await h2.until(() => k.started, ['y']);
    await h2.remove(job('y'));
    t.same(await h2.until(() => k.withdrawn, ['y']), ['y'], 'withdrawn');
  });
