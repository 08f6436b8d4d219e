// cosictl on several machines at once (--nodes, a context's endpoints) against two built engines
// over mutual TLS: one table with a NODE column, lines after their node, a machine that fails
// named without hiding the other's answer, and commands that change a machine kept to one.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import type { ConfigFile } from './config.ts';
import { runProgram, type Ran } from '../scripts/lib/run-program.ts';

const a = artifacts();
// One with the test plugins, one without: their answers differ, so whose row is whose shows.
const [withTests, plain] = await Promise.all([startServe(a.exe, ['--test-plugins']), startServe(a.exe)]);
t.teardown(() => Promise.all([withTests.stop(), plain.stop()]));
const A = `127.0.0.1:${withTests.port}`;
const B = `127.0.0.1:${plain.port}`;
// Both engines trust the run's CA and name 127.0.0.1 in their certificates: one context reaches both.
const file = YAML.parse(readFileSync(withTests.cosictlConfig, 'utf8')) as ConfigFile;
const { endpoint: _one, ...admin } = file.contexts!.admin!;
file.contexts!.both = { ...admin, endpoints: [A, B] };
file.contexts!.clash = { ...admin, endpoint: A, endpoints: [A, B] };
file.context = 'both';
const config = join(withTests.cosictlConfig, '..', 'nodes.yaml');
writeFileSync(config, YAML.stringify(file), { mode: 0o600 });

const run = (args: string[]) => runProgram(join(a.dir, 'cosictl'), ['--config', config, ...args]);
const rowsOf = (out: string, node: string) => out.split('\n').filter((l) => l.startsWith(`${node} `));

t.test('a context with endpoints: one table, a NODE column, each machine\'s rows', async (t) => {
  let r: Ran;
  for (let i = 0; i < 100; i++) {
    r = await run(['get', 'plugins']);
    if (/test-reader +running/.test(r.out) && rowsOf(r.out, B).length === 6) break;
    await new Promise((x) => setTimeout(x, 200));
  }
  t.equal(r!.code, 0, r!.err);
  const [header, ...rows] = r!.out.trimEnd().split('\n');
  t.match(header, /^NODE {13,}NAMESPACE +TYPE +ID /);
  t.equal(rows.length, 9 + 6, 'nine plugins there, six here');
  t.ok(rowsOf(r!.out, A).some((l) => / test-reader /.test(l)), 'the test plugins on A');
  t.notOk(rowsOf(r!.out, B).some((l) => / test-/.test(l)), 'none on B');
  const starts = rows.map((l) => l.indexOf('runtime'));
  t.ok(starts.every((s) => s === starts[0]), 'one table: the columns line up across machines');
  const ns = await run(['--nodes', `${B}`, '-n', 'runtime', 'get', 'plugins', 'network']);
  t.match(ns.out, new RegExp(`^${B.replace(/\./g, '\\.')} +runtime +PluginStatus +network `, 'm'),
    '-n stays the namespace; one node still gets its column');
});

t.test('a machine that cannot answer is named; the other\'s answer is still there', async (t) => {
  const r = await run(['--nodes', `${A},127.0.0.1:1`, 'get', 'links']);
  t.equal(r.code, 5, 'the failing node\'s exit code');
  t.match(r.out, /^NODE +NAMESPACE/);
  t.ok(rowsOf(r.out, A).length >= 1, 'A\'s links');
  t.match(r.err, /^cosictl: node 127\.0\.0\.1:1: cannot reach the COSI API: /m);
  const missing = await run(['--nodes', `${A},${B}`, 'get', 'testfilereads']);
  t.equal(missing.code, 4, 'B does not know the test type');
  t.match(missing.err, new RegExp(`^cosictl: node ${B.replace(/\./g, '\\.')}: unknown resource type "testfilereads"`,
    'm'));
});

t.test('lines: views, health and logs, each line after its node', async (t) => {
  const up = await run(['uptime']);
  t.equal(up.code, 0, up.err);
  for (const n of [A, B]) t.equal(rowsOf(up.out, n).length, 1, `${n}: one line`);
  t.match(rowsOf(up.out, A)[0], /^\S+ {2}up .* processes$/);
  const health = await run(['health']);
  t.equal(health.code, 1, 'A is not healthy: its test plugin crash-loops');
  t.match(health.out, new RegExp(`^${B.replace(/\./g, '\\.')} {2}ok +plugins: 6 running$`, 'm'));
  t.match(health.err, /^cosictl: node \S+: not healthy: plugins: test-crasher /m);
  const logs = await run(['logs', 'engine', '--tail', '1']);
  t.equal(logs.code, 0, logs.err);
  for (const n of [A, B]) t.match(rowsOf(logs.out, n)[0], /^\S+ {2}\S+Z INFO {2}/);
  const ps = await run(['ps']);
  t.match(ps.out, /^NODE +PID +PPID /, 'a view\'s table merged too');
  t.ok(rowsOf(ps.out, A).length > 1 && rowsOf(ps.out, B).length > 1);
});

t.test('changing a machine goes to one at a time; the flags and keys that clash are refused', async (t) => {
  const motd = 'metadata: {type: motd, id: nodes}\nspec: {text: hello}\n';
  const yaml = join(withTests.cosictlConfig, '..', 'motd.yaml');
  writeFileSync(yaml, motd);
  const many = await run(['apply', '-f', yaml]);
  t.equal(many.code, 2);
  t.match(many.err, `apply works on one machine at a time, not on ${A}, ${B} (give one with --nodes or -e)`);
  const one = await run(['--nodes', B, 'apply', '-f', yaml]);
  t.equal(one.code, 0, one.err);
  t.equal(rowsOf((await run(['get', 'motd'])).out, B).length, 1, 'only B has it');
  t.equal((await run(['-e', A, 'get', 'motd'])).code, 0, '-e means that one machine');
  const both = await run(['--nodes', A, '-e', B, 'get', 'motd']);
  t.equal(both.code, 2);
  t.match(both.err, '--nodes and --endpoint: give one of them');
  t.match((await run(['--nodes', `${A},,${B}`, 'get', 'motd'])).err, 'an empty node in the list');
  const clash = await run(['--context', 'clash', 'get', 'motd']);
  t.equal(clash.code, 2);
  t.match(clash.err, /context "clash" in \S+ has both endpoint and endpoints: keep one/);
  t.match((await run(['config', 'get-contexts'])).out, new RegExp(`\\*\\s+both\\s+${A.replace(/\./g, '\\.')},${B
    .replace(/\./g, '\\.')}\\s`));
});
