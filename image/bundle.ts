// bundle: esbuild turns an entry (init/main.ts, the CLI) into one CommonJS file, the form the pinned Node's
// single-executable loader runs (ESM mains came after 24). Modules imported only with import() stay lazy:
// esbuild wraps them, and a process evaluates what its command reaches (plugins/load.ts). The package's
// `appliance` command is an ES module instead, for the person's own Node (its modules find their files through
// import.meta.url), with `require` made for the CommonJS packages inside it. A plugin of the image gets a bundle
// of its own (bundlePlugin): its process evaluates and holds its code only, not PID 1's boot code, which the whole
// program's main imports eagerly (measured on the host: a third of a plugin's start above bare Node, 8 MiB RSS).
import { build, type BuildOptions } from 'esbuild';
import { readFileSync } from 'node:fs';
import { pluginModule } from '../plugins/load.ts';
import { LOADED_AT_FIRST_USE } from '../machinery/sys/lazy-builtins.ts';

export interface BundleOptions {
  entry: string; outfile: string; version: string; commit: string;
  /** When the source was made (s since the epoch): the floor of the machine's clock (machinery/version.ts). */
  buildEpoch: number;
  /** An ES module for the Node running it (default: CommonJS for the pinned runtime). */
  esm?: { target: string };
}

export async function bundle(o: BundleOptions): Promise<void> {
  await build({ ...common(o), entryPoints: [o.entry] });
}

/**
 * A plugin's own bundle: its module (plugins/load.ts pluginModule) run by init/commands/plugin.ts pluginMain, from
 * the project at `root`. image/code-cache-loader.cjs runs it for `plugin <name>`.
 */
export async function bundlePlugin(o: Omit<BundleOptions, 'entry' | 'esm'> & { plugin: string; root: string }) {
  const m = pluginModule(o.plugin);
  const contents = [
    'import { StartSteps } from \'./plugins/sdk/start-steps.ts\';',
    'import { pluginMain } from \'./init/commands/plugin.ts\';',
    `import { ${m.exportName} } from './${m.path}';`,
    'import { commandArgs } from \'./machinery/sys/argv.ts\';',
    // Imports are evaluated first: the `node` step holds the plugin's own code (no `code` step to follow).
    'const steps = new StartSteps();',
    'steps.mark(\'node\');',
    `pluginMain(${m.exportName}, steps, commandArgs());`,
  ].join('\n');
  await build({
    ...common(o), stdin: { contents, resolveDir: o.root, sourcefile: `plugin-${o.plugin}.ts`, loader: 'ts' },
  });
  const bundled = readFileSync(o.outfile, 'utf8');
  const eager = eagerModules(bundled, LOADED_AT_FIRST_USE);
  if (eager.length) {
    throw new Error(`${o.outfile}: the ${o.plugin} plugin's bundle loads ${eager.join(', ')} at its start: `
      + 'a module of it imports them statically (load them at first use: machinery/sys/lazy-builtins.ts)');
  }
  if (touchesPerformance(bundled)) {
    throw new Error(`${o.outfile}: the ${o.plugin} plugin's bundle reads the \`performance\` global, whose first touch `
      + 'loads node:perf_hooks at its start: read the clock with cosi/monotonic.ts msSinceStart');
  }
}

/**
 * Whether a bundle reads the `performance` global in the ways code does: a member of it (`performance.now()`,
 * `performance?.now`, `performance['now']`, through globalThis too) or the whole of it (`= performance`,
 * `{ now } = performance`). A property of that name on something else does not count. A look at the text, not a
 * parse: the word in a string followed by a member name counts too (none is in a plugin's bundle).
 */
export function touchesPerformance(bundled: string): boolean {
  const member = /(?<![\w$.])(?:globalThis\.)?performance(?:\?\.[\w$[(]|\.[A-Za-z_$]|\[)/;
  const whole = /=\s*(?:globalThis\.)?performance\b(?!\s*[.\w$])/;
  return member.test(bundled) || whole.test(bundled);
}

/** Which of `modules` a CommonJS bundle requires at its top level (esbuild writes each as `require("node:x")`). */
export function eagerModules(bundled: string, modules: readonly string[]): string[] {
  return modules.filter((m) => bundled.includes(`require("${m}")`) || bundled.includes(`require("${m.slice(5)}")`));
}

function common(o: Omit<BundleOptions, 'entry'>): BuildOptions {
  return {
    outfile: o.outfile,
    bundle: true,
    platform: 'node',
    format: o.esm ? 'esm' : 'cjs',
    target: o.esm?.target ?? 'node24',
    ...(o.esm ? { banner: { js: 'import { createRequire as __appliance_require } from \'node:module\';\n'
      + 'const require = __appliance_require(import.meta.url);' } } : {}),
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    define: {
      __APPLIANCE_VERSION__: JSON.stringify(o.version),
      __APPLIANCE_COMMIT__: JSON.stringify(o.commit),
      __APPLIANCE_BUILD_EPOCH__: String(o.buildEpoch),
    },
  };
}
