// code-cache: V8 code caches of the bundles, one per role (a plugin's of its own bundle), made on the build host
// with the pinned runtime and the executable's flags (V8 refuses a cache made by another V8 or under other flags):
// `serve` with every plugin of the image (host mode: nothing acts on the host by itself) and a machine config that
// touches nothing of the host's (WARM_CONFIG) until each plugin runs, each of those processes compiled through
// image/code-cache-maker.cjs; and `version`, whose cache (the bundle's top level, what
// Node's SEA cache holds) is the `default` of every other command. image/code-cache-loader.cjs, the executable's
// main, takes them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_CACHE_LOADER = fileURLToPath(new URL('code-cache-loader.cjs', import.meta.url));
export const CODE_CACHE_MAKER = fileURLToPath(new URL('code-cache-maker.cjs', import.meta.url));
/**
 * The config serve applies while its caches are made: what parses and applies a machine config (YAML, plan, writes)
 * is then compiled from the cache, not lazily on the machine's first config (a 240-byte config from fw_cfg took PID 1
 * ~60 ms in the YAML parser's first run, in the boot's busiest second). Only Motds: serve on the build host runs the
 * plugins unconfined, and a hostname, a sysctl or an address in it would be applied to the build host.
 */
export const WARM_CONFIG = [
  'metadata: {type: motd, id: warm-1}\nspec: {text: "the code cache\'s own config", priority: 1}\n',
  'metadata: {type: motd, id: warm-2}\nspec:\n  text: |\n    a block\n    of two lines\n',
].join('---\n');
/** How long serve's plugins may take to run on the build host. */
const PLUGINS_WITHIN_MS = 60_000;

export interface CodeCacheInputs {
  /** The pinned runtime's node, and the flags the executable starts with. */
  node: string;
  execArgv: readonly string[];
  /** The bundle (image/bundle.ts) and the native addon serve loads. */
  bundle: string;
  /** The roles that run a bundle of their own (a plugin's: `plugin-<name>`), and its file. */
  roleBundles: Readonly<Record<string, string>>;
  addon: string;
  /** The plugins serve runs (plugins/index.ts without the test-only ones): each a role. */
  plugins: readonly string[];
  outDir: string;
}

/** Makes the caches; returns each role's file. An error says which process did not get as far, with its output. */
export async function makeCodeCaches(o: CodeCacheInputs): Promise<Record<string, string>> {
  rmSync(o.outDir, { recursive: true, force: true });
  mkdirSync(o.outDir, { recursive: true });
  const env = {
    ...process.env, CODE_CACHE_BUNDLE: o.bundle, CODE_CACHE_ROLE_BUNDLES: JSON.stringify(o.roleBundles),
    CODE_CACHE_DIR: o.outDir, APPLIANCE_NATIVE: o.addon,
  };
  const run = (args: string[], role?: string) => spawn(o.node, [...o.execArgv, CODE_CACHE_MAKER, ...args], {
    env: role ? { ...env, CODE_CACHE_ROLE: role } : env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const version = run(['version'], 'default');
  const versionOut = output(version);
  const versionCode = await exit(version);
  if (versionCode !== 0) throw new Error(`code cache: \`version\` exited ${versionCode}: ${versionOut()}`);
  const socketDir = mkdtempSync(join(tmpdir(), 'code-cache-'));
  try {
    const config = join(socketDir, 'warm.yaml');
    writeFileSync(config, WARM_CONFIG);
    const serve = run(['serve', '--listen', '127.0.0.1:0', '--plugin-socket', join(socketDir, 'plugins.sock'),
      '--config', config]);
    const said = output(serve);
    const exited = exit(serve);
    const running = () => new Set([...said().matchAll(/plugin\/(\S+): \S+: running \d+ controller\(s\)/g)]
      .map((m) => m[1]!));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`code cache: after ${PLUGINS_WITHIN_MS / 1000} s, plugins not `
        + `running: ${o.plugins.filter((p) => !running().has(p)).join(', ')}; serve said:\n${said()}`)),
      PLUGINS_WITHIN_MS);
      const check = () => {
        if (!o.plugins.every((p) => running().has(p))) return;
        clearTimeout(timer);
        resolve();
      };
      serve.stdout!.on('data', check);
      serve.stderr!.on('data', check);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`code cache: serve exited (${code}) before its plugins ran; it said:\n${said()}`));
      });
    });
    serve.kill('SIGTERM');
    await exited;
  } finally {
    rmSync(socketDir, { recursive: true, force: true });
  }
  const made = Object.fromEntries(readdirSync(o.outDir).map((f) => [f.replace(/^code-cache-/, ''), join(o.outDir, f)]));
  const missing = ['default', 'serve', ...o.plugins.map((p) => `plugin-${p}`)].filter((r) => !made[r]);
  if (missing.length) throw new Error(`code cache: no cache written for ${missing.join(', ')}`);
  return made;
}

/** What a process printed so far, both streams. */
function output(child: ChildProcess): () => string {
  const chunks: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (d: Buffer) => chunks.push(String(d)));
  return () => chunks.join('');
}

const exit = (child: ChildProcess) => new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
