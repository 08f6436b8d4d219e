// sea: makes the single executable with Node's own SEA mechanism, offline: the
// build machine's node binary, stripped, its ICU data cut to English (image/icu-subset.ts),
// with the bundle injected by postject. The appliance's executable carries its bundles (the whole program's and each
// plugin's) and their code caches as assets behind a small main (image/code-cache-loader.cjs); cosictl's is the bundle
// itself.
// (@yao-pkg/pkg's SEA mode downloads a Node build and shells out to `npx postject`,
// and swallows injection errors, so we drive the same two steps directly.)
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { sha256File } from './hash.ts';
import { shrinkIcuInFile } from './icu-subset.ts';
import type { ShrinkResult } from './icu-data.ts';

const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export interface SeaOptions {
  /** The CommonJS bundle to run. */
  main: string;
  /** Where the executable goes. */
  output: string;
  /** Node binary to start from (default: the one running this build). */
  node?: string;
  /** Where the scratch files (sea config, blob) go; default: next to `output`. */
  scratchDir?: string;
  codeCache?: boolean;
  /** Node and V8 options the executable always starts with (SEA `execArgv`; Node >= 24). */
  execArgv?: readonly string[];
  /** Files the executable carries (SEA `assets`, read with node:sea's getAsset), by name. */
  assets?: Record<string, string>;
}

/** What the recipe below does to the node it starts from: part of the build's cache key. */
export const SEA_RECIPE = 'strip, icu english without translit/unames/spp, postject';

export interface SeaResult {
  /** The embedded ICU data, cut to English; undefined when the node embeds none. */
  icu: ShrinkResult | undefined;
}

export async function makeSea(o: SeaOptions): Promise<SeaResult> {
  const node = o.node ?? process.execPath;
  const scratch = join(o.scratchDir ?? dirname(o.output), basename(o.output));
  const config = `${scratch}.sea-config.json`;
  const blob = `${scratch}.sea-blob`;
  writeFileSync(config, JSON.stringify({
    main: o.main,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: o.codeCache ?? true,
    ...(o.execArgv?.length ? { execArgv: o.execArgv } : {}),
    ...(o.assets ? { assets: o.assets } : {}),
  }));
  execFileSync(node, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'pipe'] });

  // Built beside the output and renamed over it: a copy onto a running executable fails (ETXTBSY).
  const building = `${o.output}.building`;
  copyFileSync(node, building);
  chmodSync(building, 0o755);
  // The distro's node keeps ~10 MB of symbols; nothing at run time needs them. strip's warnings about Node 24's
  // unnamed .note sections say nothing to act on: kept for the error when it fails.
  execFileSync('strip', ['--strip-all', building], { stdio: ['ignore', 'ignore', 'pipe'] });
  const icu = shrinkIcuInFile(building);
  const stripped = await sha256File(building);

  const { inject } = createRequire(import.meta.url)('postject') as {
    inject(
      file: string, name: string, data: Buffer, opts: { sentinelFuse: string; overwrite?: boolean },
    ): Promise<void>;
  };
  await withoutLiefNoise(() => inject(building, 'NODE_SEA_BLOB', readFileSync(blob), {
    sentinelFuse: SEA_FUSE, overwrite: true,
  }));

  // postject can fail quietly and leave a plain node behind: prove it did not.
  if ((await sha256File(building)) === stripped) throw new Error(
    `postject left ${building} unchanged: the SEA blob was not injected`,
  );
  if (!readFileSync(building).includes(`${SEA_FUSE}:1`)) throw new Error(
    `${building}: SEA fuse not flipped; the executable would run as plain node`,
  );
  renameSync(building, o.output);
  return { icu };
}

/**
 * postject's ELF parser (LIEF, compiled to WebAssembly) writes a warning to our stderr for each of Node 24's
 * unnamed .note sections ("Can't find string offset for section name '.note.100'"), a dozen a build, about
 * nothing we could act on. Those lines are dropped while `f` runs; every other line passes.
 */
async function withoutLiefNoise<T>(f: () => Promise<T>): Promise<T> {
  const write = process.stderr.write;
  const noise = /^warning: Can't find string offset for section name '[^']*'\n?$/;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    if (noise.test(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())) return true;
    return write.call(process.stderr, chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    return await f();
  } finally {
    process.stderr.write = write;
  }
}

/**
 * The executable's bundles and code caches are taken by its V8 (image/code-cache-loader.cjs): a plugin's own and the
 * whole program's with the default cache. A refused cache would only cost time, unseen: the build says so instead.
 */
export function checkCodeCacheTaken(exe: string): void {
  const expected: [string[], string, string][] = [
    [['plugin', 'time'], 'bundle-plugin-time', 'plugin-time'], [['version'], 'bundle', 'default'],
  ];
  for (const [args, bundle, cache] of expected) {
    const said = codeCacheSaid(exe, args);
    if (said.bundle !== bundle || said.cache !== cache || said.verdict !== 'taken') {
      throw new Error(`${exe} ${args.join(' ')}: ${bundle} with code cache ${cache} not taken: ${said.line}`);
    }
  }
}

/** Which bundle and code cache `exe args` took, and whether V8 took or refused the cache, as its loader says. */
export function codeCacheSaid(exe: string, args: string[]): {
  bundle?: string; cache?: string; verdict?: string; line: string;
} {
  const r = spawnSync(exe, args, { env: { ...process.env, APPLIANCE_CODE_CACHE_DEBUG: '1' }, encoding: 'utf8' });
  const said = /^(\S+), code cache (\S+) \(\d+ bytes\): (taken|refused)$/m.exec(r.stderr ?? '');
  return said ? { bundle: said[1]!, cache: said[2]!, verdict: said[3]!, line: said[0] }
    : { line: r.stderr || String(r.error) };
}

/** Runs the executable with `args` and checks its output: a plain copy of node would not answer. */
export function checkSeaRuns(exe: string, args: string[], expect: RegExp): void {
  let out: string;
  try {
    out = execFileSync(exe, args, { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(
      `${exe} ${args.join(' ')} failed: the SEA does not run our entry (${(e as Error).message.split('\n')[0]})`,
      { cause: e },
    );
  }
  if (!expect.test(out)) throw new Error(
    `${exe} ${args.join(' ')} printed ${JSON.stringify(out.slice(0, 200))}, not ${expect}: `
      + 'the SEA does not run our entry',
  );
}
