// plugin: runs one built-in plugin (started by the engine, never by hand). Only that plugin's code is loaded
// (plugins/load.ts): not plugins/index.ts, which loads them all. In the image a plugin process runs its own bundle
// instead (image/bundle.ts bundlePlugin: this module's runBuiltinPlugin and the plugin's module, nothing else).
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinSpecMessages } from '../../machinery/model/definitions.ts';
import type { Plugin } from '../../machinery/model/plugin.ts';
import { loadPlugin, PLUGIN_LOADERS } from '../../plugins/load.ts';
import { runPlugin } from '../../plugins/sdk/run-plugin.ts';
import { testBreak } from '../../machinery/sys/test-break.ts';
import { StartSteps } from '../../plugins/sdk/start-steps.ts';

/** The `plugin NAME` command of the whole program: loads the plugin by name. */
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
  return runBuiltinPlugin(p, steps);
}

/** Runs a built-in plugin already loaded; `steps` has marked the process's start so far. */
export async function runBuiltinPlugin(p: Plugin, steps: StartSteps): Promise<number> {
  if (testBreak() === `plugin-crash:${p.name}`) {
    process.stderr.write(`plugin ${p.name}: this build is broken on purpose (test-break plugin-crash:${p.name})\n`);
    return 1;
  }
  // A plugin meets only built-in types: their specs travel as protobuf both ways.
  const codecs = builtinCodecs(builtinSpecMessages());
  steps.mark('codecs');
  return runPlugin(p, codecs, steps);
}

/**
 * The main of a plugin's own bundle: runs `p` as main.ts runs a command (its exit code, an error said). The process
 * was asked for `plugin NAME` (image/code-cache-loader.cjs chose this bundle by it): another name is refused.
 */
export function pluginMain(p: Plugin, steps: StartSteps, args: readonly string[]): void {
  const run = args[0] === 'plugin' && args[1] === p.name ? runBuiltinPlugin(p, steps)
    : Promise.reject(new Error(`this bundle runs \`plugin ${p.name}\` only, not \`${args.join(' ')}\``));
  run.then(
    (code) => { process.exitCode = code; },
    (e: Error) => {
      process.stderr.write(`init: ${e.message}\n`);
      process.exitCode = 1;
    },
  );
}
