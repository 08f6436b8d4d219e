// The loaders a plugin process uses name the same plugins, in the same order, as the engine's static list, and
// load the same objects; the definitions a plugin process decodes with are every built-in type's.
import t from 'tap';
import { allBuiltinDefinitions } from '../machinery/model/definitions.ts';
import { builtinTypes, IMAGE_PLUGIN_PROCESSES, PLUGINS } from './index.ts';
import { loadPlugin, PLUGIN_LOADERS, pluginModule } from './load.ts';

t.test('one loader per built-in plugin, in the engine list\'s order, loading that plugin', async (t) => {
  t.same(Object.keys(PLUGIN_LOADERS), PLUGINS.map((p) => p.name));
  for (const p of PLUGINS) t.equal(await loadPlugin(p.name), p, `${p.name}: the same plugin object`);
  t.equal(await loadPlugin('nosuch'), undefined, 'an unknown name loads nothing');
  t.equal(await loadPlugin('toString'), undefined, 'nor does a name every object has');
});

t.test('each plugin of the image keeps its Plugin where its own bundle is made from (pluginModule)', async (t) => {
  t.ok(IMAGE_PLUGIN_PROCESSES.length >= 5, 'the image has its plugin processes');
  for (const name of IMAGE_PLUGIN_PROCESSES) {
    const m = pluginModule(name);
    const module = await import(new URL(`../${m.path}`, import.meta.url).href) as Record<string, unknown>;
    t.equal(module[m.exportName], await loadPlugin(name), `${m.path} exports ${m.exportName}`);
  }
});

t.test('a plugin process decodes every built-in type the engine serves', async (t) => {
  const types = (defs: { type: string; protoMessage?: string }[]) =>
    defs.map((d) => `${d.type} ${d.protoMessage ?? ''}`).sort();
  t.same(types(allBuiltinDefinitions()), types(builtinTypes()));
});
