// plugin: runs one built-in plugin (started by the engine, never by hand). Only that plugin's code is loaded
// (plugins/load.ts): not plugins/index.ts, which loads them all.
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { allBuiltinDefinitions } from '../../machinery/model/definitions.ts';
import { loadPlugin, PLUGIN_LOADERS } from '../../plugins/load.ts';
import { runPlugin } from '../../plugins/sdk/run-plugin.ts';
import { testBreak } from '../../machinery/sys/test-break.ts';
import { StartSteps } from '../../plugins/sdk/start-steps.ts';

export async function plugin(args: string[]): Promise<number> {
  // Where this process's start goes, printed with its ready line (bench:boot reads the costs of each plugin).
  const steps = new StartSteps();
  steps.mark('node');
  const name = args[0];
  const p = name ? await loadPlugin(name) : undefined;
  steps.mark('code');
  if (!p) {
    process.stderr.write(`plugin: ${name ? `unknown plugin "${name}"` : 'name a plugin'}; `
      + `built in: ${Object.keys(PLUGIN_LOADERS).join(', ')}\n`);
    return 2;
  }
  if (testBreak() === `plugin-crash:${p.name}`) {
    process.stderr.write(`plugin ${p.name}: this build is broken on purpose (test-break plugin-crash:${p.name})\n`);
    return 1;
  }
  // A plugin meets only built-in types: their specs travel as protobuf both ways.
  const codecs = builtinCodecs(allBuiltinDefinitions());
  steps.mark('codecs');
  return runPlugin(p, codecs, steps);
}
