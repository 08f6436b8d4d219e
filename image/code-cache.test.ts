// code-cache: the config the build's `serve` applies while the caches are made touches nothing of the build host's:
// its types are served by plugins that run inside the engine (state in, state out), never by a process that acts on
// the host (a hostname or a sysctl in it renamed the build host once).
import t from 'tap';
import YAML from 'yaml';
import { serversOf } from '../machinery/model/definitions.ts';
import { builtinTypes, PLUGINS } from '../plugins/index.ts';
import { WARM_CONFIG } from './code-cache.ts';

t.test('the warm config names only types of plugins that run in the engine', async (t) => {
  const aliases = new Map(builtinTypes().flatMap((d) => [d.type, ...d.aliases ?? []]
    .map((a) => [a.toLowerCase(), d.type] as const)));
  const types = YAML.parseAllDocuments(WARM_CONFIG).map((d) => {
    const name = String((d.toJS() as { metadata: { type: string } }).metadata.type).toLowerCase();
    return aliases.get(name) ?? name;
  });
  t.ok(types.length >= 2, `${types.length} documents`);
  const servers = serversOf(types);
  t.same(servers.filter((s) => !PLUGINS.find((p) => p.name === s)?.inEngine), [],
    `served by ${servers.join(', ')}: in the engine`);
});
