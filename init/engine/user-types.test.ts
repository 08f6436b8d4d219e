// User-defined types against the built engine: a type with a schema, a type with its
// own protobuf message (a FileDescriptorSet protoc made), a free-form type; unique
// aliases; built-in definitions and namespaces protected; a definition or namespace
// that still holds resources cannot be deleted.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts } from '../../qemu/artifacts.ts';
import {
  DEFINITION_TYPE, META_NAMESPACE, NAMESPACE_TYPE, type ResourceDefinitionSpec,
} from '../../cosi/meta/definition.ts';
import { RemoteState } from '../../cosi/remote/client.ts';
import { newResource, type Resource } from '../../cosi/resource/resource.ts';
import { codecsFromDefinitions } from '../../machinery/model/spec-codecs.ts';
import { startServe } from './serve-harness.ts';
import { MOTD_TYPE } from '../../proto/gen/resource-types.ts';

const served = await startServe(artifacts().exe, ['--no-plugins']);
t.teardown(() => served.stop());
const api = served.client();
t.teardown(() => api.close());
const define = (spec: Partial<ResourceDefinitionSpec> & { type: string; defaultNamespace: string }) =>
  api.create(newResource(
    { namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: spec.type.toLowerCase() },
    { aliases: [], printColumns: [], ...spec },
  ));
const definition = async (type: string) =>
  (await api.get({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() }))
    .spec as ResourceDefinitionSpec;

t.test('a type with a schema: its resources are validated like built-in ones', async (t) => {
  await define({
    type: 'Backups.example.com', defaultNamespace: 'backups', aliases: ['bk'],
    printColumns: [{ name: 'Target', jsonPath: '{.target}' }],
    schema: {
      type: 'object', required: ['target'],
      properties: { target: { type: 'string', format: 'hostname' }, keep: { type: 'integer', minimum: 1 } },
    },
  });
  const p = { namespace: 'backups', type: 'Backups.example.com', id: 'nightly' };
  const r = await api.create(newResource(p, { target: 'store.example.net', keep: 7 }));
  t.same(r.spec, { target: 'store.example.net', keep: 7 });
  await t.rejects(api.create(newResource({ ...p, id: 'bad' }, { target: 'not a host', keep: 0 })), {
    code: 'invalid-argument',
    message: /spec\.target: must be a host name, got "not a host"; spec\.keep: must be >= 1, got 0/,
  });
  await t.rejects(api.create(newResource({ ...p, id: 'bad' }, { keep: 2, extra: true })), {
    message: /spec\.target: required; spec\.extra: unknown field \(known: target, keep\)/,
  });
  const def = await definition('Backups.example.com');
  t.match(def, { displayType: 'Backup', aliases: ['bk', 'backup'] }, 'filled in');
  await t.rejects(
    define({
      type: 'Broken.example.com', defaultNamespace: 'x',
      schema: { type: 'object', properties: { a: { type: 'strnig' } } } as never,
    }),
    { code: 'invalid-argument', message: /spec\.schema\.properties\.a\.type: must be one of object, string/ },
    'a broken schema is refused',
  );
});

t.test('a type with its own protobuf message: both encodings, the message checked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'user-proto-'));
  writeFileSync(join(dir, 'sensor.proto'), [
    'syntax = "proto3";', 'package example.sensors.v1;',
    'message SensorSpec {', '  string name = 1;', '  optional double threshold = 2;', '  repeated string tags = 3;',
    '  Unit unit = 4;', '}',
    'enum Unit { UNIT_UNSPECIFIED = 0; UNIT_CELSIUS = 1; UNIT_KELVIN = 2; }', '',
  ].join('\n'));
  execFileSync('protoc', [
    '-I', dir, '--include_imports', `--descriptor_set_out=${join(dir, 'set.pb')}`, 'sensor.proto',
  ]);
  const descriptor = readFileSync(join(dir, 'set.pb')).toString('base64');
  await define({
    type: 'Sensors.example.com', defaultNamespace: 'sensors',
    protoMessage: 'example.sensors.v1.SensorSpec', protoDescriptor: descriptor,
  });
  const def = await definition('Sensors.example.com');
  t.match(def.schema, {
    type: 'object',
    properties: {
      name: { type: 'string' }, threshold: { type: 'number' }, unit: { type: 'string', enum: ['celsius', 'kelvin'] },
    },
  }, 'the schema derived from the message');
  const p = { namespace: 'sensors', type: 'Sensors.example.com', id: 'cpu' };
  await api.create(newResource(p, { name: 'cpu0', threshold: 85.5, unit: 'celsius', tags: ['hot'] }));
  const got = await api.get(p);
  t.same(got.spec, { name: 'cpu0', threshold: 85.5, tags: ['hot'], unit: 'celsius' }, 'from yaml_spec');
  // A client that compiles the definition's descriptor reads proto_spec: the same spec.
  const defs = (await api.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE }))
    .map((r) => r.spec as ResourceDefinitionSpec);
  const typed = served.client('admin', {
    codecs: codecsFromDefinitions(() => defs, (d, e) => t.fail(`${d.type}: ${e.message}`)),
  });
  t.teardown(() => typed.close());
  t.same((await typed.get(p)).spec, got.spec, 'from proto_spec, decoded with the user\'s own message');
  await t.rejects(api.create(newResource({ ...p, id: 'bad' }, { name: 'x', unit: 'fahrenheit' })),
    { message: /spec\.unit: must be one of celsius, kelvin/ });
  await t.rejects(
    define({
      type: 'Gauges.example.com', defaultNamespace: 'sensors',
      protoMessage: 'example.sensors.v1.Nope', protoDescriptor: descriptor,
    }),
    { code: 'invalid-argument', message: /protoDescriptor holds no message "example\.sensors\.v1\.Nope"/ },
  );
  await t.rejects(
    define({ type: 'Gauges.example.com', defaultNamespace: 'sensors', protoMessage: 'example.sensors.v1.SensorSpec' }),
    { message: /is not a message this machine knows; add protoDescriptor/ },
  );
});

t.test('aliases are unique: a clashing alias is refused, an initials clash is dropped', async (t) => {
  await t.rejects(define({ type: 'Limits.example.com', defaultNamespace: 'x', aliases: ['links'] }),
    { code: 'invalid-argument', message: /the name "links" is already LinkStatuses\.net\.appliance\.dev's/ });
  await t.rejects(define({ type: 'LinkStatuses.example.com', defaultNamespace: 'x' }),
    { message: /the name "linkstatuses" is already/ }, 'the plural too');
  const all = (await api.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE }));
  const builtIns = all.filter((r) => r.metadata.owner === 'meta').map((r) => r.spec as ResourceDefinitionSpec);
  t.notOk(builtIns.some((d) => d.aliases.includes('rs')),
    '"rs" (Route/Resolver Spec/Status) means no built-in type rather than one of four');
  await define({ type: 'RouteSpecials.example.com', defaultNamespace: 'x' });
  t.ok((await definition('RouteSpecials.example.com')).aliases.includes('rs'), 'so the first type to come gets it');
  await define({ type: 'ResultSets.example.com', defaultNamespace: 'x' });
  t.notOk((await definition('ResultSets.example.com')).aliases.includes('rs'), 'and a second one does not');
  const defs = (await api.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE }))
    .map((r) => r.spec as ResourceDefinitionSpec);
  const names = defs.flatMap((d) => [...new Set([d.type.toLowerCase(), ...d.allAliases, ...d.aliases])]);
  t.same(names.filter((n, i) => names.indexOf(n) !== i), [], 'no name belongs to two types');
});

t.test('built-in definitions and namespaces cannot be changed or deleted; '
  + 'one holding resources cannot go', async (t) => {
  const motd = await api.get({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: MOTD_TYPE.toLowerCase() });
  await t.rejects(
    api.update({ ...motd, spec: { ...(motd.spec as object), aliases: ['m'] } } as Resource),
    { code: 'permission-denied', message: /a built-in type cannot be changed/ },
  );
  await t.rejects(
    api.update({ ...motd, spec: { ...(motd.spec as object), aliases: ['m'] } } as Resource, { owner: 'meta' }),
    { code: 'permission-denied', message: /"meta" is a controller of the machine: only it writes as it/ },
    'nor by posing as its owner',
  );
  await t.rejects(
    api.teardownAndDestroy({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: MOTD_TYPE.toLowerCase() }),
    { code: 'permission-denied', message: /built in/ },
  );
  await t.rejects(api.destroy({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: 'network' }),
    { code: 'permission-denied' });
  await t.rejects(api.destroy({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: 'backups.example.com' }),
    { code: 'in-use', message: /1 Backups\.example\.com resource\(s\) still exist/ });
  await t.rejects(api.destroy({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: 'backups' }),
    { code: 'in-use', message: /still holds 1 resource/ });
  await api.destroy({ namespace: 'backups', type: 'Backups.example.com', id: 'nightly' });
  await api.destroy({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: 'backups.example.com' });
  await t.rejects(
    api.create(newResource({ namespace: 'backups', type: 'Backups.example.com', id: 'again' }, { target: 'x' })),
    { message: /unknown resource type/ }, 'gone',
  );
  await t.rejects(
    api.create(newResource({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: 'Bad_Name' }, { description: '' })),
    { message: /must be a DNS label/ },
  );
});
