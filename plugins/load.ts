// load: one built-in plugin by name, loading its code and nothing else's. A plugin process runs one plugin: with
// every plugin's modules loaded (plugins/index.ts) each of the machine's six plugin processes also held the other
// five's code and objects (ARCHITECTURE.md, "Which Node": the measured cost). The engine, which needs every plugin's
// controllers to know who writes what, keeps the static list in plugins/index.ts; a test holds the two equal.
import type { Plugin } from '../machinery/model/plugin.ts';

/** Each built-in plugin's loader, in plugins/index.ts's order. A dynamic import: esbuild keeps each lazy. */
export const PLUGIN_LOADERS: Readonly<Record<string, () => Promise<Plugin>>> = {
  network: async () => (await import('./network/plugin.ts')).networkPlugin,
  platform: async () => (await import('./platform/plugin.ts')).platformPlugin,
  storage: async () => (await import('./storage/plugin.ts')).storagePlugin,
  system: async () => (await import('./system/plugin.ts')).systemPlugin,
  time: async () => (await import('./time/plugin.ts')).timePlugin,
  issue: async () => (await import('./issue/plugin.ts')).issuePlugin,
  'test-writer': async () => (await import('./testing/plugins.ts')).testWriterPlugin,
  'test-reader': async () => (await import('./testing/plugins.ts')).testReaderPlugin,
  'test-crasher': async () => (await import('./testing/plugins.ts')).testCrasherPlugin,
};

/**
 * Where a plugin of the image keeps its Plugin: `plugins/<name>/plugin.ts` exports `<name>Plugin` (load.test.ts holds
 * each to it). A plugin's own bundle is made from it (image/bundle.ts bundlePlugin).
 */
export function pluginModule(name: string): { path: string; exportName: string } {
  return { path: `plugins/${name}/plugin.ts`, exportName: `${name}Plugin` };
}

/** The built-in plugin of that name, loaded; undefined when there is none. */
export async function loadPlugin(name: string): Promise<Plugin | undefined> {
  return Object.hasOwn(PLUGIN_LOADERS, name) ? PLUGIN_LOADERS[name]!() : undefined;
}
