// A plugin's own bundle holds its plugin and no other, and loads none of the modules kept for first use; the check
// that refuses one names what it found.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePlugin, eagerModules, touchesPerformance } from './bundle.ts';
import { PLUGINS } from '../plugins/index.ts';
import { LOADED_AT_FIRST_USE } from '../machinery/sys/lazy-builtins.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

t.test('the time plugin\'s bundle: its code, no other plugin\'s, nothing loaded eagerly that waits for first use',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const outfile = join(dir, 'plugin-time.cjs');
    await bundlePlugin({ plugin: 'time', root: ROOT, outfile, version: '0.0.0', commit: 'test', buildEpoch: 0 });
    const bundled = readFileSync(outfile, 'utf8');
    for (const p of PLUGINS) {
      if (p.name === 'time') t.ok(bundled.includes(p.description), 'the time plugin is in it');
      else t.notOk(bundled.includes(p.description), `${p.name} is not`);
    }
    t.same(eagerModules(bundled, LOADED_AT_FIRST_USE), []);
    t.notOk(touchesPerformance(bundled), 'nor the performance global');
  });

t.test('touchesPerformance finds the global, not a property of that name', async (t) => {
  t.ok(touchesPerformance('const t0=performance.now();'));
  t.ok(touchesPerformance('x=(performance.timeOrigin)'));
  t.ok(touchesPerformance('globalThis.performance.now()'));
  t.ok(touchesPerformance('performance?.now()'));
  t.ok(touchesPerformance('performance["now"]()'));
  t.ok(touchesPerformance('const{now:n}=performance;'));
  t.ok(touchesPerformance('const p = globalThis.performance'));
  t.notOk(touchesPerformance('o.performance.now();a.performance=1;'));
  t.notOk(touchesPerformance('const t0=process.uptime()*1e3;'));
  t.notOk(touchesPerformance('log("better performance.")'), 'the word in a string');
  t.notOk(touchesPerformance('log("for performance. See x")'), 'the word ending a sentence');
});

t.test('eagerModules finds a top-level require by either name', async (t) => {
  const bundled = 'var a=require("node:crypto"),b=require("zlib"),c=require("node:net");';
  t.same(eagerModules(bundled, LOADED_AT_FIRST_USE), ['node:crypto', 'node:zlib']);
  t.same(eagerModules('process.getBuiltinModule("node:crypto")', LOADED_AT_FIRST_USE), []);
});

t.test('an unknown plugin has no module to bundle: esbuild names the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await t.rejects(bundlePlugin({ plugin: 'nosuch', root: ROOT, outfile: join(dir, 'x.cjs'), version: '0', commit: 'x',
    buildEpoch: 0 }), /plugins\/nosuch\/plugin\.ts/);
});
