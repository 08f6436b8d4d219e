// The COSI State conformance suite over gRPC against the built engine, on a type a
// client registered through the API (not a built-in test type): each case in a
// namespace of its own, created over the API as well.
import t from 'tap';
import { artifacts } from '../../qemu/artifacts.ts';
import { runStateSuite } from '../../cosi/conformance/state-suite.ts';
import { DEFINITION_TYPE, META_NAMESPACE, NAMESPACE_TYPE } from '../../cosi/meta/definition.ts';
import { RemoteState } from '../../cosi/remote/client.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { startServe } from './serve-harness.ts';

const TYPE = 'Gizmos.conformance.example';
const served = await startServe(artifacts().exe, ['--no-plugins']);
t.teardown(() => served.stop());
const admin = served.client();
t.teardown(() => admin.close());
// What a client generated from the upstream meta.proto sends: the definition's own fields, no schema.
await admin.create(newResource({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: TYPE.toLowerCase() }, {
  type: TYPE, displayType: '', defaultNamespace: 'gizmos', aliases: ['gz'], allAliases: [], printColumns: [],
}));

let n = 0;
runStateSuite(t, async () => {
  const namespace = `conformance-${++n}`;
  await admin.create(newResource(
    { namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: namespace }, { description: 'a conformance case' },
  ));
  const client = served.client();
  return { state: client, namespace, type: TYPE, close: async () => {
    client.close();
  } };
});

t.test('the registered type was filled in and its default namespace created', async (t) => {
  const def = (await admin.get({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: TYPE.toLowerCase() }))
    .spec as Record<string, unknown>;
  t.match(def, { displayType: 'Gizmo', aliases: ['gz', 'gizmo'] },
    'display type and aliases as the reference runtime fills them');
  t.ok(await admin.get({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: 'gizmos' }), 'namespace gizmos exists');
});
