// definitions: the built-in types come from proto/gen/resource-types.ts by who serves them, and every renamed one
// answers to its former names (CHANGELOG.md).
import t from 'tap';
import { fillDefinitions, resolveDefinition } from '../../cosi/meta/definition.ts';
import { builtinTypes, PLUGINS } from '../../plugins/index.ts';
import { allBuiltinDefinitions, builtinSpecMessages, definitionsServedBy, serversOf } from './definitions.ts';
import { pluginOutputs, pluginWriters } from './plugin.ts';
import * as TYPES from '../../proto/gen/resource-types.ts';
import {
  ADDRESS_SPEC_TYPE, HOSTNAME_SPEC_TYPE, KERNEL_PARAM_SPEC_TYPE, MOTD_TYPE, PLUGIN_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';

t.test('each built-in plugin serves the types proto says it does; an unknown server is an error', async (t) => {
  for (const p of PLUGINS.filter((x) => x.name !== 'test-crasher')) {
    t.same(p.types().map((d) => d.type), definitionsServedBy(p.name).map((d) => d.type), p.name);
  }
  t.throws(() => definitionsServedBy('no-such-plugin'), /no resource type is served by "no-such-plugin" .*engine/);
  const a = definitionsServedBy('network');
  a[0]!.aliases?.push('changed');
  t.notOk((definitionsServedBy('network')[0]!.aliases ?? []).includes('changed'), 'each call a fresh copy');
});

t.test('the seven statuses renamed to <Noun>SpecStatus answer to their former names', async (t) => {
  const defs = fillDefinitions(builtinTypes());
  const renamed = defs.filter((d) => d.formerTypes?.length);
  t.same(renamed.map((d) => d.type.split('.')[0]).sort(), [
    'AddressSpecStatuses', 'FileSpecStatuses', 'HostnameSpecStatuses', 'KernelParamSpecStatuses', 'MountSpecStatuses',
    'ResolverSpecStatuses', 'RouteSpecStatuses',
  ]);
  for (const d of renamed) {
    const former = d.formerTypes![0]!;
    const plural = former.split('.')[0]!.toLowerCase();
    t.equal(resolveDefinition(defs, plural)?.type, d.type, `${plural} -> ${d.type}`);
    t.equal(resolveDefinition(defs, former)?.type, d.type, `${former} -> ${d.type}`);
  }
});

t.test('the servers of types: each once, in order met; a type nobody built in serves has none', async (t) => {
  t.same(serversOf([HOSTNAME_SPEC_TYPE, KERNEL_PARAM_SPEC_TYPE, ADDRESS_SPEC_TYPE, 'Widgets.example.com']),
    ['network', 'system'], 'the config bench:boot applies: network and system act on it');
  t.same(serversOf([MOTD_TYPE, PLUGIN_STATUS_TYPE]), ['issue', 'engine']);
  t.same(serversOf([]), []);
});

t.test('each merged type has its plugin as writer, though the merges run on the engine: no extension may claim it',
  async (t) => {
    const merged = Object.entries(TYPES).filter(([k, v]) => k.startsWith('MERGED_') && typeof v === 'string')
      .map(([, v]) => v as string);
    t.ok(merged.length >= 10, `${merged.length} merged types`);
    const writers = pluginWriters(PLUGINS);
    for (const type of merged) {
      t.ok(writers.some((w) => w.outputs.includes(type)), `${type} has a built-in writer`);
    }
    const network = PLUGINS.find((p) => p.name === 'network')!;
    t.notOk(pluginOutputs(network).includes(TYPES.MERGED_ADDRESS_SPEC_TYPE),
      'the network process\'s connection may not write what the engine merges');
  });

t.test('builtinSpecMessages: every built-in type with its spec message, as the definitions have them', async (t) => {
  const pairs = (ds: readonly { type: string; protoMessage?: string }[]) =>
    ds.map((d) => `${d.type}=${d.protoMessage}`);
  const all = allBuiltinDefinitions();
  t.ok(all.length > 40, `${all.length} built-in types`);
  t.strictSame(pairs(builtinSpecMessages()), pairs(all));
});
