// index: every built-in plugin, in one list, so the whole system is one read. The
// composition roots (init/boot/pid1.ts, init/commands/) hand it to the engine.
import type { DefinitionInput } from '../cosi/meta/definition.ts';
import { servedTypes, type Plugin } from '../machinery/model/plugin.ts';
import { issuePlugin } from './issue/plugin.ts';
import { networkPlugin } from './network/plugin.ts';
import { platformPlugin } from './platform/plugin.ts';
import { systemPlugin } from './system/plugin.ts';
import { storagePlugin } from './storage/plugin.ts';
import { timePlugin } from './time/plugin.ts';
import { testCrasherPlugin, testReaderPlugin, testWriterPlugin } from './testing/plugins.ts';

export const PLUGINS: readonly Plugin[] = [
  networkPlugin, platformPlugin, storagePlugin, systemPlugin, timePlugin, issuePlugin,
  testWriterPlugin, testReaderPlugin, testCrasherPlugin,
];

/** The plugins a machine runs in processes of their own: not the test-only ones, not those inside the engine. */
export const IMAGE_PLUGIN_PROCESSES: readonly string[] = PLUGINS.filter((p) => !p.testOnly && !p.inEngine)
  .map((p) => p.name);

export function findPlugin(name: string): Plugin | undefined {
  return PLUGINS.find((p) => p.name === name);
}

/** Every built-in type: the engine's and every plugin's (test plugins included). */
export function builtinTypes(): DefinitionInput[] {
  return servedTypes(PLUGINS);
}
