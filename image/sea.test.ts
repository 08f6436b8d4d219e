import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { artifacts } from '../qemu/artifacts.ts';
import { checkSeaRuns, codeCacheSaid } from './sea.ts';
import { findIcuPackages, readIcuPackage } from './icu-data.ts';
import { nodeRuntime, pinnedVersion, RUNTIME_DIR } from '../scripts/runtime.ts';
import { join } from 'node:path';
import { IMAGE_PLUGIN_PROCESSES } from '../plugins/index.ts';

const { exe } = artifacts();
const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

t.test('the single executable runs our entry, multi-call', async (t) => {
  t.doesNotThrow(() => checkSeaRuns(exe, ['version'], new RegExp(`"version":"${version}"`)));
  t.match(execFileSync(exe, ['--help'], { encoding: 'utf8' }), /usage: init \[command\]/);
  const from = (await nodeRuntime()).node;
  t.ok(statSync(exe).size < statSync(from).size, 'stripped: smaller than the node it came from');
});

t.test('the executable embeds the pinned runtime (runtime/package-lock.json), not the host\'s node', async (t) => {
  const { node } = JSON.parse(execFileSync(exe, ['version'], { encoding: 'utf8' })) as { node: string };
  t.equal(node, `v${pinnedVersion()}`);
  const runtime = await nodeRuntime();
  t.equal(runtime.version, node, 'the installed runtime is the pinned one');
  // scripts/test.ts runs every test file under it, so that what is tested is what ships (issue 36).
  t.equal(process.version, runtime.version, 'the tests run under it');
  t.notOk(existsSync(join(RUNTIME_DIR, 'node_modules', '.bin')),
    'installed without bin links: npm scripts outside the tests keep the host\'s node');
});

t.test('the executable embeds English ICU data only (image/icu-subset.ts)', async (t) => {
  const bin = readFileSync(exe);
  const starts = findIcuPackages(bin);
  t.equal(starts.length, 1, 'one ICU data package');
  const names = new Set(readIcuPackage(bin, starts[0]!).items.map((i) => i.name.replace(/^icudt\w+\//, '')));
  t.ok(names.has('en.res') && names.has('root.res') && names.has('coll/ucadata.icu'), 'English, root, collation');
  t.notOk(names.has('de.res') || names.has('zone/fr.res') || names.has('brkitr/cjdict.dict'), 'no other locale');
});

t.test('the build check refuses a plain copy of node', async (t) => {
  t.throws(() => checkSeaRuns(process.execPath, ['version'], new RegExp(version)), /does not run our entry/);
});

t.test('an unknown command exits 2 and says which', async (t) => {
  try {
    execFileSync(exe, ['frobnicate'], { stdio: 'pipe' });
    t.fail('should exit non-zero');
  } catch (e) {
    const err = e as { status: number; stderr: Buffer };
    t.equal(err.status, 2);
    t.match(err.stderr.toString(), /unknown command "frobnicate"/);
  }
});

t.test('each process takes the code cache its role left on the build host (image/code-cache.ts)', async (t) => {
  const taken = (args: string[]) => {
    const said = codeCacheSaid(exe, args);
    return [said.bundle, said.cache, said.verdict];
  };
  for (const name of IMAGE_PLUGIN_PROCESSES) {
    t.same(taken(['plugin', name]), [`bundle-plugin-${name}`, `plugin-${name}`, 'taken'], `plugin ${name}: its own`);
  }
  t.same(taken(['serve', '--help']), ['bundle', 'serve', 'taken'], 'serve (PID 1 takes it too)');
  t.same(taken(['no-such-command']), ['bundle', 'default', 'taken'], 'any other command: the top level\'s');
  t.equal(spawnSync(exe, ['version'], { encoding: 'utf8' }).stderr, '', 'nothing said unless asked');
  // A plugin's own bundle runs the plugin: without the engine's socket it says what is missing, as the whole did.
  const alone = spawnSync(exe, ['plugin', 'time'], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  t.equal(alone.status, 2, 'plugin time alone: exit 2');
  t.match(alone.stderr, /time: COSI_PLUGIN_SOCKET is not set/);
});
