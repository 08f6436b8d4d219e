// plugin: runs one built-in plugin (started by the engine, never by hand).
import { findPlugin, PLUGINS } from '../../plugins/index.ts';
import { runPlugin } from '../../plugins/sdk/run-plugin.ts';

export async function plugin(args: string[]): Promise<number> {
  const name = args[0];
  const p = name ? findPlugin(name) : undefined;
  if (!p) {
    process.stderr.write(`plugin: ${name ? `unknown plugin "${name}"` : 'name a plugin'}; built in: ${PLUGINS.map((x) => x.name).join(', ')}\n`);
    return 2;
  }
  return runPlugin(p);
}
