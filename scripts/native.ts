// native: builds native/ with cmake-js against Node headers on this machine (offline:
// npm_config_nodedir points cmake-js at them instead of a download): the build passes the
// pinned runtime's (scripts/runtime.ts); run alone, the host node's. The addon uses N-API
// only, so it loads in any Node at or above that N-API version.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { $ } from './lib/zx.ts';
import { ROOT } from './lib/paths.ts';
import { step } from './lib/log.ts';
import { ADDON_FILE } from '../native/index.ts';

export const ADDON_PATH = join(ROOT, 'native', 'build', 'Release', ADDON_FILE);

export function localNodeDir(): string {
  const candidates = [process.env.npm_config_nodedir, dirname(dirname(process.execPath))]
    .filter((d): d is string => !!d);
  const dir = candidates.find((d) => existsSync(join(d, 'include', 'node', 'node_api.h')));
  if (!dir) throw new Error(
    `Node headers (include/node/node_api.h) not found under ${candidates.join(', ')}; `
      + 'install them or set npm_config_nodedir',
  );
  return dir;
}

export async function buildNative(nodedir = localNodeDir()): Promise<string> {
  const s = step('native');
  const addonApi = createRequire(import.meta.url)('node-addon-api').include_dir as string;
  const cmakeJs = join(ROOT, 'node_modules', '.bin', 'cmake-js');
  const r = await $({ cwd: join(ROOT, 'native'), env: { ...process.env, npm_config_nodedir: nodedir }, nothrow: true })`
    ${cmakeJs} build --log-level warn --CDNODE_ADDON_API_DIR=${join(ROOT, addonApi)}`.quiet();
  if (r.exitCode !== 0) throw new Error(
    `cmake-js build of native/ failed (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`,
  );
  if (!existsSync(ADDON_PATH)) throw new Error(`cmake-js succeeded but ${ADDON_PATH} is missing`);
  s.done(ADDON_PATH);
  return ADDON_PATH;
}

if (import.meta.url === `file://${process.argv[1]}`) await buildNative();
