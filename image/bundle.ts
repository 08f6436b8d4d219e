// bundle: esbuild turns an entry (init/main.ts, the CLI) into one CommonJS file, the form the pinned Node's
// single-executable loader runs (ESM mains came after 24). Modules imported only with import() stay lazy:
// esbuild wraps them, and a process evaluates what its command reaches (plugins/load.ts).
import { build } from 'esbuild';

export interface BundleOptions {
  entry: string; outfile: string; version: string; commit: string;
  /** When the source was made (s since the epoch): the floor of the machine's clock (machinery/version.ts). */
  buildEpoch: number;
}

export async function bundle(o: BundleOptions): Promise<void> {
  await build({
    entryPoints: [o.entry],
    outfile: o.outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
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
