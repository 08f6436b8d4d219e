// index: every built-in plugin, in one list, so the whole system is one read.
import type { Plugin } from './sdk/plugin.ts';
import { issuePlugin } from './issue/plugin.ts';
import { networkPlugin } from './network/plugin.ts';
import { systemPlugin } from './system/plugin.ts';
import { storagePlugin } from './storage/plugin.ts';
import { timePlugin } from './time/plugin.ts';
import { testCrasherPlugin, testReaderPlugin, testWriterPlugin } from './testing/plugins.ts';

export const PLUGINS: readonly Plugin[] = [networkPlugin, storagePlugin, systemPlugin, timePlugin, issuePlugin, testWriterPlugin, testReaderPlugin, testCrasherPlugin];

export function findPlugin(name: string): Plugin | undefined {
  return PLUGINS.find((p) => p.name === name);
}
