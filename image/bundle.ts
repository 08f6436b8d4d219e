// bundle: esbuild turns an entry (init/main.ts, the CLI) into one CommonJS file, the form the pinned Node's
// single-executable loader runs (ESM mains came after 24). Modules imported only with import() stay lazy:
// esbuild wraps them, and a process evaluates what its command reaches (plugins/load.ts). The package's
// `appliance` command is an ES module instead, for the person's own Node (its modules find their files through
// import.meta.url), with `require` made for the CommonJS packages inside it.
import { build } from 'esbuild';

export interface BundleOptions {
  entry: string; outfile: string; version: string; commit: string;
  /** When the source was made (s since the epoch): the floor of the machine's clock (machinery/version.ts). */
  buildEpoch: number;
  /** An ES module for the Node running it (default: CommonJS for the pinned runtime). */
  esm?: { target: string };
}

export async function bundle(o: BundleOptions): Promise<void> {
  await build({
    entryPoints: [o.entry],
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
  });
}
