// The loaders a plugin process uses name the same plugins, in the same order, as the engine's static list, and
// load the same objects; the definitions a plugin process decodes with are every built-in type's.
import t from 'tap';
import { allBuiltinDefinitions } from '../machinery/model/definitions.ts';
import { builtinTypes, PLUGINS } from './index.ts';
import { loadPlugin, PLUGIN_LOADERS } from './load.ts';

t.test('one loader per built-in plugin, in the engine list\'s order, loading that plugin', async (t) => {
  t.same(Object.keys(PLUGIN_LOADERS), PLUGINS.map((p) => p.name));
  for (const p of PLUGINS) t.equal(await loadPlugin(p.name), p, `${p.name}: the same plugin object`);
  t.equal(await loadPlugin('nosuch'), undefined, 'an unknown name loads nothing');
  t.equal(await loadPlugin('toString'), undefined, 'nor does a name every object has');
});

t.test('a plugin process decodes every built-in type the engine serves', async (t) => {
  const types = (defs: { type: string; protoMessage?: string }[]) =>
    defs.map((d) => `${d.type} ${d.protoMessage ?? ''}`).sort();
  t.same(types(allBuiltinDefinitions()), types(builtinTypes()));
});
