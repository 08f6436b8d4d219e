// The planner alone: real configs validated against the built-in types (offline, as
// `cosictl validate` does), planned against a state holding what users declared before.
// Nothing is applied: the plan is what is checked.
import t from 'tap';
import {
  DEFINITION_TYPE, META_NAMESPACE, NAMESPACE_TYPE, resourceName, type DefinitionInput, type ResourceDefinitionSpec,
} from '../../../cosi/meta/definition.ts';
import { newResource, type Pointer, type Resource } from '../../../cosi/resource/resource.ts';
import { offlineValidationContext, validateConfig } from '../../../machinery/config/validate-config.ts';
import { API_CERTIFICATE_AUTHORITY_TYPE, MOTD_TYPE, SECURITY_NS } from '../../../proto/gen/resource-types.ts';
import { BUILTIN_NAMESPACES, BUILTIN_TYPES } from '../../../proto/gen/builtin-types.ts';
import {
  byRank, changesOf, desiredAsIs, desiredOf, planConfig, type ApplyMode, type Desired, type PlanInput, type Step,
} from './config-plan.ts';

const motd = (id: string, text: string, extra = '') =>
  `---\nmetadata: {type: motd, id: ${id}${extra}}\nspec: {text: "${text}"}\n`;
const knobs = `---
metadata: {type: ResourceDefinition, namespace: meta, id: bootknobs.example.com}
spec:
  type: BootKnobs.example.com
  defaultNamespace: example
  needsReboot: true
  schema: {type: object, required: [level], properties: {level: {type: integer}}}
---
metadata: {type: BootKnobs.example.com, id: k1}
spec: {level: 3}
`;

/** A machine of the built-in types holding what users declared: `before` created as the steps would. */
async function machine(before: string) {
  const ctx = await offlineValidationContext(BUILTIN_TYPES as DefinitionInput[], BUILTIN_NAMESPACES);
  const definitionOf = (type: string) =>
    ctx.state.findSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() })
      ?.spec as ResourceDefinitionSpec | undefined;
  const nameOf = (p: Pointer) => resourceName(p, definitionOf(p.type));
  const want = (text: string) => validateConfig(text, ctx, 'test.yaml').docs.map((d) => desiredOf(d, ctx.codecs));
  const users = () => ctx.state.resourcesWhere((r) => r.metadata.owner === '')
    .sort((a, b) => byRank(a.metadata, b.metadata));
  for (const w of [...want(before)].sort(byRank)) {
    const r = newResource(w, w.spec, { labels: w.labels, annotations: w.annotations });
    await ctx.state.create(ctx.admission.admit(r, 'create'));
  }
  const plan = (text: string, mode: ApplyMode, more: Partial<PlanInput> = {}) => planConfig({
    want: want(text), mode, find: (p) => ctx.state.findSync(p), configured: users(),
    asStored: (r) => ctx.admission.check(r, 'update'), nameOf, ...more,
  });
  return { ctx, want, users, plan, nameOf, definitionOf };
}

const said = (steps: readonly Step[]) => steps.map((s) => `${s.name} ${s.action}`);

t.test('a merge creates, updates and leaves what the config names, and deletes nothing', async (t) => {
  const m = await machine(motd('one', 'first') + motd('two', 'second') + motd('gone', 'x'));
  const steps = m.plan(motd('one', 'first') + motd('two', 'changed') + motd('three', 'third'), 'merge');
  t.same(said(steps), ['motd/one unchanged', 'motd/two updated', 'motd/three created']);
  t.equal(steps[1]!.current?.spec && (steps[1]!.current.spec as { text: string }).text, 'second',
    'an update carries the resource as it is');
  t.same(steps[1]!.want?.spec, { text: 'changed' });
  t.equal(steps[2]!.current, undefined);
});

t.test('labels and annotations count: a resource whose labels differ is updated', async (t) => {
  const m = await machine(motd('one', 'first', ', labels: {tier: a}'));
  t.same(said(m.plan(motd('one', 'first', ', labels: {tier: a}'), 'merge')), ['motd/one unchanged']);
  t.same(said(m.plan(motd('one', 'first', ', labels: {tier: b}'), 'merge')), ['motd/one updated']);
  t.same(said(m.plan(motd('one', 'first', ', annotations: {why: x}'), 'merge')), ['motd/one updated']);
});

t.test('a replace deletes what it does not name, but not denied types nor the API CA', async (t) => {
  const m = await machine(motd('one', 'first') + motd('two', 'second'));
  const ca = newResource({ namespace: SECURITY_NS, type: API_CERTIFICATE_AUTHORITY_TYPE, id: 'api' },
    { certificate: 'x' });
  const steps = m.plan(motd('one', 'first'), 'replace', { configured: [...m.users(), ca] });
  t.same(said(steps), ['motd/one unchanged', 'motd/two deleted']);
  t.equal(steps[1]!.want, undefined);
  t.equal(steps[1]!.current?.metadata.id, 'two', 'a deletion carries the resource it deletes');
  const denied = (type: string) => (type === MOTD_TYPE ? 'operators may not write motds' : undefined);
  t.same(said(m.plan('', 'replace', { denied })), [], 'a sender\'s denied types stay as they are');
  t.same(said(m.plan('', 'merge')), [], 'an empty merge changes nothing');
  t.same(said(m.plan('', 'replace')), ['motd/one deleted', 'motd/two deleted']);
});

t.test('a definition applied again is unchanged, and its default namespace is not pruned', async (t) => {
  const m = await machine(knobs);
  const created = m.users().map((r) => `${r.metadata.type} ${r.metadata.id}`);
  t.same(created, [
    `${NAMESPACE_TYPE} example`, `${DEFINITION_TYPE} bootknobs.example.com`, 'BootKnobs.example.com k1',
  ], 'the namespace came with the type, owned by users like it');
  const def = { namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: 'bootknobs.example.com' };
  t.notSame(m.ctx.state.findSync(def)?.spec, m.want(knobs)[0]!.spec, 'admission completed the stored definition');
  t.same(said(m.plan(knobs, 'replace')), [
    'resourcedefinition/bootknobs.example.com unchanged', 'bootknob/k1 unchanged',
  ], 'compared as admission stores it');
  t.same(said(m.plan(knobs, 'replace', { asStored: (r) => r })), [
    'resourcedefinition/bootknobs.example.com updated', 'bootknob/k1 unchanged',
  ], 'compared as written, it would look changed');
  const without = m.plan(motd('one', 'first'), 'replace');
  t.same(said(without), [
    'motd/one created', 'namespace/example deleted', 'resourcedefinition/bootknobs.example.com deleted',
    'bootknob/k1 deleted',
  ], 'without the type, its namespace goes too');
});

t.test('changes say which need a reboot, and only while the machine runs', async (t) => {
  const m = await machine(knobs);
  const steps = m.plan(knobs.replace('level: 3', 'level: 4') + motd('one', 'first'), 'replace');
  t.same(said(steps), [
    'resourcedefinition/bootknobs.example.com unchanged', 'bootknob/k1 updated', 'motd/one created',
  ]);
  const needsReboot = (type: string) => m.definitionOf(type)?.needsReboot === true;
  t.same(changesOf(steps, true, needsReboot), [
    { action: 'unchanged', resource: 'resourcedefinition/bootknobs.example.com', needsReboot: false },
    { action: 'updated', resource: 'bootknob/k1', needsReboot: true },
    { action: 'created', resource: 'motd/one', needsReboot: false },
  ]);
  t.ok(changesOf(steps, false, needsReboot).every((c) => !c.needsReboot), 'at boot nothing waits for the next one');
  const gone = m.plan(motd('one', 'x'), 'replace');
  const deleted = changesOf(gone, true, needsReboot).filter((c) => c.action === 'deleted');
  t.same(deleted.map((c) => [c.resource, c.needsReboot]), [
    ['namespace/example', false], ['resourcedefinition/bootknobs.example.com', false], ['bootknob/k1', true],
  ], 'a deletion asks its type');
});

t.test('the config as it stands, planned as a replace, changes nothing: what a revert relies on', async (t) => {
  const m = await machine(knobs + motd('one', 'first', ', labels: {tier: a}'));
  const asIs: Desired[] = desiredAsIs(m.users(), m.nameOf);
  t.same(asIs.map((d) => d.name), [
    'namespace/example', 'resourcedefinition/bootknobs.example.com', 'motd/one', 'bootknob/k1',
  ], 'in creation order (config/ before example/)');
  const steps = planConfig({
    want: asIs, mode: 'replace', find: (p) => m.ctx.state.findSync(p), configured: m.users(),
    asStored: (r) => m.ctx.admission.check(r, 'update'), nameOf: m.nameOf,
  });
  t.same(steps.map((s) => s.action), ['unchanged', 'unchanged', 'unchanged', 'unchanged']);
  const copy = asIs.find((d) => d.id === 'one')!;
  copy.labels.tier = 'b';
  t.same(m.users().find((r) => r.metadata.id === 'one')?.metadata.labels, { tier: 'a' }, 'wants are copies');
});

t.test('creation order: namespaces, then definitions, then the rest, each by pointer', async (t) => {
  const p = (namespace: string, type: string, id: string): Pointer => ({ namespace, type, id });
  const sorted = [
    p('config', MOTD_TYPE, 'b'), p(META_NAMESPACE, DEFINITION_TYPE, 'x.example.com'), p('config', MOTD_TYPE, 'a'),
    p(META_NAMESPACE, NAMESPACE_TYPE, 'zz'), p('a-ns', 'X.example.com', 'z'),
  ].sort(byRank);
  t.same(sorted.map((x) => `${x.type === MOTD_TYPE ? 'motd' : x.type} ${x.id}`), [
    `${NAMESPACE_TYPE} zz`, `${DEFINITION_TYPE} x.example.com`, 'X.example.com z', 'motd a', 'motd b',
  ]);
});

t.test('the planner reads the state only through what it is handed', async (t) => {
  const m = await machine(motd('one', 'first'));
  const asked: string[] = [];
  const want = m.want(motd('one', 'first') + motd('two', 'second'));
  const current = new Map<string, Resource>(m.users().map((r) => [r.metadata.id, r]));
  const steps = planConfig({
    want, mode: 'merge', configured: [], nameOf: m.nameOf, asStored: (r) => r,
    find: (q) => {
      asked.push(q.id);
      return current.get(q.id);
    },
  });
  t.same(asked, ['one', 'two']);
  t.same(said(steps), ['motd/one unchanged', 'motd/two created']);
});
