import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { artifacts } from '../qemu/artifacts.ts';
import { checkSeaRuns } from './sea.ts';

const { exe } = artifacts();
const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

t.test('the single executable runs our entry, multi-call', async (t) => {
  t.doesNotThrow(() => checkSeaRuns(exe, ['version'], new RegExp(`"version":"${version}"`)));
  t.match(execFileSync(exe, ['--help'], { encoding: 'utf8' }), /usage: init \[command\]/);
  t.ok(statSync(exe).size < statSync(process.execPath).size, 'stripped: smaller than the node it came from');
});

t.test('the build check refuses a plain copy of node', async (t) => {
  t.throws(() => checkSeaRuns(process.execPath, ['version'], new RegExp(version)), /does not run our entry/);
});

t.test('an unknown command exits 2 and says which', async (t) => {
  try { execFileSync(exe, ['frobnicate'], { stdio: 'pipe' }); t.fail('should exit non-zero'); } catch (e) {
    const err = e as { status: number; stderr: Buffer };
    t.equal(err.status, 2);
    t.match(err.stderr.toString(), /unknown command "frobnicate"/);
  }
});
