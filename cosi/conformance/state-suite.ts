// state-suite: the COSI State conformance cases of shared/cosi-wire.md as code.
// Any State runs it: the memory store directly, and the gRPC client against our
// server (a real socket), so both answer the same questions the same way.
import type { Test } from 'tap';
import { newResource, type Pointer, type Resource } from '../resource/resource.ts';
import { StateError, type StateErrorCode } from '../state/errors.ts';
import { addFinalizer, removeFinalizer } from '../state/finalizers.ts';
import { copyResource } from '../state/freeze.ts';
import type { LabelQuery } from '../state/query.ts';
import type { State } from '../state/state.ts';
import { collect } from './collector.ts';

/**
 * What the suite runs against. A subject may name the kind its cases use (a type
 * registered over the API, a fresh namespace per case); by default Tests.conformance.cosi.dev
 * in "default". Specs are free-form: `{ value: <id> }`.
 */
export interface SuiteSubject { state: State; close(): Promise<void>; namespace?: string; type?: string }
export type SubjectFactory = () => Promise<SuiteSubject>;

/** The kind a case runs in, and its helpers. */
interface Kind {
  NS: string;
  TYPE: string;
  ptr(id: string, type?: string): Pointer;
  res(id: string, spec?: unknown, labels?: Record<string, string>): Resource;
}

function kindOf(subj: SuiteSubject): Kind {
  const NS = subj.namespace ?? 'default';
  const TYPE = subj.type ?? 'Tests.conformance.cosi.dev';
  const ptr = (id: string, type = TYPE): Pointer => ({ namespace: NS, type, id });
  return { NS, TYPE, ptr, res: (id, spec = { value: id }, labels = {}) => newResource(ptr(id), spec, { labels }) };
}

async function rejectsCode(t: Test, p: Promise<unknown>, code: StateErrorCode, what: string): Promise<void> {
  try {
    await p;
    t.fail(`${what}: expected ${code}, it succeeded`);
  } catch (e) {
    t.ok(e instanceof StateError, `${what}: a StateError`);
    t.equal((e as StateError).code, code, `${what}: ${code}`);
  }
}

const ids = (rs: readonly Resource[]) => rs.map((r) => r.metadata.id);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function runStateSuite(t: Test, factory: SubjectFactory): void {
  const withState = (name: string, fn: (t: Test, s: State, k: Kind) => Promise<void>) =>
    t.test(name, async (t) => {
      const subj = await factory();
      try {
        await fn(t, subj.state, kindOf(subj));
      } finally {
        await subj.close();
      }
    });

  withState('create, get, list, destroy; not found and already exists', async (t, s, { NS, TYPE, ptr, res }) => {
    const created = await s.create(res('b'), { owner: '' });
    t.equal(created.metadata.version, 1, 'version 1');
    t.equal(created.metadata.phase, 'running');
    t.ok(created.metadata.created > 0 && created.metadata.updated === created.metadata.created,
      'created = updated = now');
    await s.create(res('a'));
    await rejectsCode(t, s.create(res('a')), 'already-exists', 'create twice');
    const got = await s.get(ptr('b'));
    t.same(got.spec, { value: 'b' }, 'spec round trip');
    t.same(ids(await s.list({ namespace: NS, type: TYPE })), ['a', 'b'], 'list sorted by id');
    t.same(await s.list({ namespace: 'other', type: TYPE }), [], 'namespaces are separate');
    await rejectsCode(t, s.get(ptr('zzz')), 'not-found', 'get missing');
    await s.destroy(ptr('a'));
    await rejectsCode(t, s.destroy(ptr('a')), 'not-found', 'destroy missing');
    await rejectsCode(t, s.get(ptr('a')), 'not-found', 'get destroyed');
    await rejectsCode(t, s.update({ ...res('nope'), metadata: { ...res('nope').metadata, version: 1 } }),
      'not-found', 'update missing');
  });

  withState('owners: a wrong or empty owner is refused', async (t, s, { NS, TYPE, ptr, res }) => {
    const r = await s.create(res('owned'), { owner: 'ctrl-a' });
    t.equal(r.metadata.owner, 'ctrl-a');
    await rejectsCode(t, s.update(copyResource(r), { owner: 'ctrl-b' }), 'owner-conflict', 'update by another owner');
    await rejectsCode(t, s.update(copyResource(r)), 'owner-conflict', 'update with empty owner');
    await rejectsCode(t, s.destroy(ptr('owned'), { owner: 'ctrl-b' }), 'owner-conflict', 'destroy by another owner');
    await rejectsCode(t, s.teardown(ptr('owned')), 'owner-conflict', 'teardown with empty owner');
    const u = await s.update(copyResource(r), { owner: 'ctrl-a' });
    t.equal(u.metadata.version, 2);
    await s.destroy(ptr('owned'), { owner: 'ctrl-a' });
  });

  withState('update: version conflicts (stale and future), every update bumps', async (t, s, {
    NS, TYPE, ptr, res,
  }) => {
    const r = await s.create(res('v'));
    const u = await s.update(copyResource(r));
    t.equal(u.metadata.version, 2, 'bumped');
    const again = await s.update(copyResource(u));
    t.equal(again.metadata.version, 3, 'bumped without change');
    t.ok(again.metadata.updated >= again.metadata.created);
    await rejectsCode(t, s.update(copyResource(r)), 'version-conflict', 'stale version');
    const future = copyResource(again);
    future.metadata.version = 10;
    await rejectsCode(t, s.update(future), 'version-conflict', 'future version');
  });

  withState('phase conflict after teardown unless expected phase is tearingDown', async (t, s, {
    NS, TYPE, ptr, res,
  }) => {
    await s.create(res('p'));
    t.equal(await s.teardown(ptr('p')), true, 'no finalizers: ready');
    const cur = await s.get(ptr('p'));
    t.equal(cur.metadata.phase, 'tearingDown');
    await rejectsCode(t, s.update(copyResource(cur), { expectedPhase: 'running' }),
      'phase-conflict', 'expected running');
    const ok = await s.update(copyResource(cur), { expectedPhase: 'tearingDown' });
    t.equal(ok.metadata.version, cur.metadata.version + 1);
    const any = await s.update(copyResource(ok));
    t.equal(any.metadata.phase, 'tearingDown', 'no expected phase: any phase, phase kept');
  });

  withState('teardown with a finalizer: destroy refused, teardown false until it goes', async (t, s, {
    NS, TYPE, ptr, res,
  }) => {
    await s.create(res('f'));
    await addFinalizer(s, ptr('f'), 'holder');
    t.equal(await s.teardown(ptr('f')), false, 'finalizer pending');
    await rejectsCode(t, s.destroy(ptr('f')), 'pending-finalizers', 'destroy with finalizer');
    t.equal(await s.teardown(ptr('f')), false, 'teardown again: still pending');
    await removeFinalizer(s, ptr('f'), 'holder');
    t.equal(await s.teardown(ptr('f')), true, 'ready once the finalizer is gone');
    await s.destroy(ptr('f'));
  });

  withState('teardown and destroy waits for finalizers', async (t, s, { NS, TYPE, ptr, res }) => {
    await s.create(res('td'));
    await addFinalizer(s, ptr('td'), 'x');
    let done = false;
    const p = s.teardownAndDestroy(ptr('td')).then(() => {
      done = true;
    });
    await sleep(100);
    t.notOk(done, 'blocked while the finalizer stays');
    t.equal((await s.get(ptr('td'))).metadata.phase, 'tearingDown');
    await removeFinalizer(s, ptr('td'), 'x');
    await p;
    await rejectsCode(t, s.get(ptr('td')), 'not-found', 'destroyed');
  });

  withState('concurrent finalizer adds and removes converge', async (t, s, { NS, TYPE, ptr, res }) => {
    await s.create(res('cf'));
    const names = Array.from({ length: 8 }, (_, i) => `fin-${i}`);
    await Promise.all(names.map((n) => addFinalizer(s, ptr('cf'), n)));
    await Promise.all(names.slice(0, 3).map((n) => removeFinalizer(s, ptr('cf'), n)));
    t.same([...(await s.get(ptr('cf'))).metadata.finalizers].sort(), names.slice(3).sort(), 'exactly the 5 left');
  });

  withState('10 concurrent destroys: one wins, the rest are not found', async (t, s, { NS, TYPE, ptr, res }) => {
    await s.create(res('race'));
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => s.destroy(ptr('race'))));
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'one wins');
    t.ok(results.filter((r) => r.status === 'rejected')
      .every((r) => (r as PromiseRejectedResult).reason.code === 'not-found'), 'others not-found');
  });

  withState('kind watch: create, update with old, teardown, destroy', async (t, s, { NS, TYPE, ptr, res }) => {
    const w = await collect(s, { namespace: NS, type: TYPE });
    const r = await s.create(res('w1'));
    await s.update({ ...copyResource(r), spec: { value: 'changed' } });
    await s.teardown(ptr('w1'));
    await s.destroy(ptr('w1'));
    const ev = await w.next(4);
    t.same(ev.map((e) => e.type), ['created', 'updated', 'updated', 'destroyed']);
    t.same(ev[1]!.old?.spec, { value: 'w1' }, 'update carries the old resource');
    t.same(ev[1]!.resource.spec, { value: 'changed' });
    t.equal(ev[2]!.resource.metadata.phase, 'tearingDown');
    t.ok(ev.every((e) => e.bookmark && e.bookmark.length > 0), 'live events carry bookmarks');
    w.watch.close();
  });

  withState('kind watch: bootstrap then live; aggregated puts bootstrap in one batch', async (t, s, {
    NS, TYPE, ptr, res,
  }) => {
    await s.create(res('b'));
    await s.create(res('a'));
    const w = await collect(s, { namespace: NS, type: TYPE }, { bootstrapContents: true });
    const boot = await w.next(3);
    t.same(boot.map((e) => `${e.type}:${e.resource.metadata.id}`), ['created:a', 'created:b', 'bootstrapped:'],
      'sorted by id, then bootstrapped');
    t.ok(boot[2]!.bookmark, 'bootstrapped carries a bookmark');
    t.equal(boot[2]!.resource.metadata.type, TYPE);
    await s.create(res('c'));
    t.same((await w.next()).map((e) => `${e.type}:${e.resource.metadata.id}`), ['created:c'], 'then live');
    const agg = await collect(s, { namespace: NS, type: TYPE }, { bootstrapContents: true, aggregated: true });
    await agg.next(4);
    t.equal(agg.batches[0]!.length, 4, 'one batch: 3 created + bootstrapped');
    const v0 = await collect(s, { namespace: NS, type: TYPE }, { bootstrapContents: true }, false);
    await v0.next(3);
    t.same(await v0.quiet(), [], 'api_version 0 hides bootstrapped');
    t.notOk(v0.events.some((e) => e.type === 'bootstrapped'));
    for (const c of [w, agg, v0]) c.watch.close();
  });

  withState('kind watch: bootstrap bookmark is a noop tombstone to resume from', async (t, s, {
    NS, TYPE, ptr, res,
  }) => {
    await s.create(res('x'));
    const w = await collect(s, { namespace: NS, type: TYPE }, { bootstrapBookmark: true });
    const [noop] = await w.next();
    t.equal(noop!.type, 'noop');
    t.ok(noop!.bookmark);
    await s.create(res('y'));
    w.watch.close();
    const resumed = await collect(s, { namespace: NS, type: TYPE }, { startFromBookmark: noop!.bookmark! });
    t.same((await resumed.next()).map((e) => e.resource.metadata.id), ['y'], 'resumes after the bookmark');
    resumed.watch.close();
  });

  withState('tail events replay the last N', async (t, s, { NS, TYPE, ptr, res }) => {
    for (const id of ['t1', 't2', 't3']) await s.create(res(id));
    await s.destroy(ptr('t1'));
    const w = await collect(s, { namespace: NS, type: TYPE }, { tailEvents: 2 });
    t.same((await w.next(2)).map((e) => `${e.type}:${e.resource.metadata.id}`), ['created:t3', 'destroyed:t1']);
    const one = await collect(s, { namespace: NS, type: TYPE, id: 't2' }, { tailEvents: 5 });
    t.same((await one.next()).map((e) => `${e.type}:${e.resource.metadata.id}`), ['created:t2'],
      'single: only its own events');
    t.same(await one.quiet(), []);
    await rejectsCode(
      t, s.watch({ namespace: NS, type: TYPE }, { tailEvents: 1, startFromBookmark: new Uint8Array(21) }, () => {}),
      'invalid-argument', 'tail + bookmark',
    );
    w.watch.close();
    one.watch.close();
  });

  withState('bookmarks: resuming from each replays exactly what followed', async (t, s, { NS, TYPE, ptr, res }) => {
    const w = await collect(s, { namespace: NS, type: TYPE });
    const r = await s.create(res('bm'));
    const u = await s.update(copyResource(r));
    await s.update(copyResource(u));
    await s.create(res('bm2'));
    await s.destroy(ptr('bm'));
    const all = await w.next(5);
    w.watch.close();
    for (let i = 0; i < all.length; i++) {
      const rw = await collect(s, { namespace: NS, type: TYPE }, { startFromBookmark: all[i]!.bookmark! });
      const expected = all.slice(i + 1)
        .map((e) => `${e.type}:${e.resource.metadata.id}:${e.resource.metadata.version}`);
      const got = expected.length ? await rw.next(expected.length) : [];
      t.same(got.map((e) => `${e.type}:${e.resource.metadata.id}:${e.resource.metadata.version}`), expected,
        `after event ${i}`);
      t.same(await rw.quiet(100), [], `nothing more after event ${i}`);
      rw.watch.close();
    }
    await rejectsCode(
      t, s.watch({ namespace: NS, type: TYPE }, { startFromBookmark: new Uint8Array([1, 2, 3]) }, () => {}),
      'invalid-bookmark', 'garbage bookmark',
    );
    await rejectsCode(
      t, s.watch(
        { namespace: NS, type: 'Other.conformance.cosi.dev' }, { startFromBookmark: all[0]!.bookmark! }, () => {},
      ),
      'invalid-bookmark', 'bookmark of another kind',
    );
  });

  withState('single watch: destroyed, created, updated to tearingDown, finalizers, destroyed', async (t, s, {
    NS, TYPE, ptr, res,
  }) => {
    const w = await collect(s, { namespace: NS, type: TYPE, id: 'one' });
    const [first] = await w.next();
    t.equal(first!.type, 'destroyed', 'missing resource: destroyed tombstone first');
    t.equal(first!.resource.metadata.id, 'one');
    t.notOk(first!.bookmark, 'initial event has no bookmark');
    await s.create(res('one'));
    await s.create(res('other'));
    await addFinalizer(s, ptr('one'), 'f1');
    await s.teardown(ptr('one'));
    await removeFinalizer(s, ptr('one'), 'f1');
    await s.destroy(ptr('one'));
    const ev = await w.next(5);
    t.same(ev.map((e) => e.type), ['created', 'updated', 'updated', 'updated', 'destroyed']);
    t.same(ev[1]!.resource.metadata.finalizers, ['f1']);
    t.equal(ev[2]!.resource.metadata.phase, 'tearingDown');
    t.same(ev[3]!.resource.metadata.finalizers, []);
    t.ok(ev.every((e) => e.bookmark), 'changes carry bookmarks');
    t.same(await w.quiet(), [], 'other resources do not show');
    w.watch.close();
    const existing = await collect(s, { namespace: NS, type: TYPE, id: 'other' });
    t.same((await existing.next()).map((e) => e.type), ['created'], 'existing resource: created first');
    existing.watch.close();
    await rejectsCode(
      t, s.watch({ namespace: NS, type: TYPE, id: 'one' }, { bootstrapContents: true }, () => {}),
      'unimplemented', 'bootstrap on a single watch',
    );
    await rejectsCode(
      t, s.watch(
        { namespace: NS, type: TYPE, id: 'one' },
        { labelQueries: [{ terms: [{ key: 'a', op: 'exists', value: [] }] }] },
        () => {},
      ),
      'unimplemented', 'labels on a single watch',
    );
  });

  withState('label filters on a watch: synthetic created and destroyed', async (t, s, { NS, TYPE, ptr, res }) => {
    const q: LabelQuery[] = [
      { terms: [{ key: 'app', op: 'equal', value: ['web'] }] },
      { terms: [{ key: 'tier', op: 'exists', value: [] }] },
    ];
    await s.create(res('pre', {}, { app: 'web' }));
    await s.create(res('no', {}, { app: 'db' }));
    const w = await collect(s, { namespace: NS, type: TYPE }, { bootstrapContents: true, labelQueries: q });
    t.same((await w.next(2)).map((e) => `${e.type}:${e.resource.metadata.id}`), ['created:pre', 'bootstrapped:']);
    const no = await s.get(ptr('no'));
    const tiered = await s.update({
      ...copyResource(no), metadata: { ...copyResource(no).metadata, labels: { app: 'db', tier: '1' } },
    });
    t.same((await w.next()).map((e) => `${e.type}:${e.resource.metadata.id}`), ['created:no'],
      'starts matching (second query, OR): created');
    await s.update({ ...copyResource(tiered), metadata: { ...copyResource(tiered).metadata, labels: { app: 'db' } } });
    t.same((await w.next()).map((e) => `${e.type}:${e.resource.metadata.id}`), ['destroyed:no'],
      'stops matching: destroyed');
    const pre = await s.get(ptr('pre'));
    await s.update({ ...copyResource(pre), spec: { v: 2 } });
    t.same((await w.next()).map((e) => e.type), ['updated'], 'still matching: updated');
    await s.create(res('late', {}, { app: 'db' }));
    t.same(await w.quiet(), [], 'non-matching create not shown');
    w.watch.close();
  });

  withState('label operators, numeric ones included, on list', async (t, s, { NS, TYPE, ptr, res }) => {
    await s.create(res('r1', {}, { size: '10kg', name: 'alpha', env: 'prod' }));
    await s.create(res('r2', {}, { size: '12000', name: 'beta' }));
    await s.create(res('r3', {}, { size: '2Ki', name: 'gamma', env: 'dev' }));
    await s.create(res('r4', {}, { size: 'lots' }));
    const q = async (...terms: LabelQuery['terms']) =>
      ids(await s.list({ namespace: NS, type: TYPE }, { labelQueries: [{ terms }] }));
    t.same(await q({ key: 'env', op: 'exists', value: [] }), ['r1', 'r3'], 'exists');
    t.same(await q({ key: 'env', op: 'exists', value: [], invert: true }), ['r2', 'r4'], 'not exists (inverted)');
    t.same(await q({ key: 'env', op: 'equal', value: ['prod'] }), ['r1'], 'equal');
    t.same(await q({ key: 'env', op: 'equal', value: ['prod'], invert: true }), ['r2', 'r3', 'r4'],
      'inverted equal matches a missing label');
    t.same(await q({ key: 'name', op: 'in', value: ['alpha', 'gamma'] }), ['r1', 'r3'], 'in');
    t.same(await q({ key: 'name', op: 'lt', value: ['beta'] }), ['r1'], 'lt (string)');
    t.same(await q({ key: 'name', op: 'lte', value: ['beta'] }), ['r1', 'r2'], 'lte (string)');
    t.same(await q({ key: 'size', op: 'lt-numeric', value: ['12000'] }), ['r1', 'r3'], '10kg < 12000, 2Ki < 12000');
    t.same(await q({ key: 'size', op: 'lte-numeric', value: ['12k'] }), ['r1', 'r2', 'r3'], 'lte numeric with unit');
    t.same(await q({ key: 'size', op: 'lt-numeric', value: ['12000'], invert: true }), ['r2'],
      'unparsable never matches, even inverted');
    t.same(await q({ key: 'env', op: 'exists', value: [] }, { key: 'name', op: 'equal', value: ['gamma'] }), ['r3'],
      'terms AND');
    const or = ids(await s.list({ namespace: NS, type: TYPE }, {
      labelQueries: [
        { terms: [{ key: 'name', op: 'equal', value: ['alpha'] }] },
        { terms: [{ key: 'name', op: 'equal', value: ['beta'] }] },
      ],
    }));
    t.same(or, ['r1', 'r2'], 'queries OR');
  });

  withState('id regexp on list and on a bootstrapped watch', async (t, s, { NS, TYPE, ptr, res }) => {
    for (const id of ['eth0', 'eth1', 'lo', 'veth-eth']) await s.create(res(id));
    t.same(ids(await s.list({ namespace: NS, type: TYPE }, { idQuery: '^eth' })), ['eth0', 'eth1'],
      'anchored by the pattern');
    t.same(ids(await s.list({ namespace: NS, type: TYPE }, { idQuery: 'eth' })), ['eth0', 'eth1', 'veth-eth'],
      'unanchored');
    const w = await collect(s, { namespace: NS, type: TYPE }, { bootstrapContents: true, idQuery: '^eth' });
    t.same((await w.next(3)).map((e) => `${e.type}:${e.resource.metadata.id}`),
      ['created:eth0', 'created:eth1', 'bootstrapped:']);
    await s.create(res('eth2'));
    await s.create(res('wlan0'));
    t.same((await w.next()).map((e) => e.resource.metadata.id), ['eth2']);
    t.same(await w.quiet(), []);
    w.watch.close();
    await rejectsCode(t, s.list({ namespace: NS, type: TYPE }, { idQuery: '(' }), 'invalid-argument', 'bad regexp');
  });

  withState('labels and annotations are stored and returned', async (t, s, { NS, TYPE, ptr, res }) => {
    const r = newResource(ptr('la'), { a: 1 }, { labels: { x: 'y' }, annotations: { note: 'hello' } });
    await s.create(r);
    const got = await s.get(ptr('la'));
    t.same(got.metadata.labels, { x: 'y' });
    t.same(got.metadata.annotations, { note: 'hello' });
  });
}
