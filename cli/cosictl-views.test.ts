// cosictl uptime, memory, ps, mounts, netstat and restart against the built engine (`appliance
// serve` with the test plugins) over mutual TLS: the views read this host's /proc (serve runs here),
// so each is checked against what this test knows of the host; restart against PluginStatus.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import { type PluginStatusSpec } from '../machinery/model/runtime-types.ts';
import { runProgram } from '../scripts/lib/run-program.ts';
import { PLUGIN_STATUS_TYPE, RUNTIME_NS } from '../proto/gen/resource-types.ts';

const a = artifacts();
const served = await startServe(a.exe, ['--test-plugins']);
t.teardown(() => served.stop());
const admin = served.client();
t.teardown(() => admin.close());

const run = (args: string[], context = 'admin') =>
  runProgram(join(a.dir, 'cosictl'), ['--config', served.cosictlConfig, '--context', context, ...args]);
const plugin = async (name: string) =>
  (await admin.get({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: name })).spec as PluginStatusSpec;
async function until(what: string, f: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await f()) return;
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}
await until('test-reader runs', async () => (await plugin('test-reader')).state === 'running');

t.test('uptime and memory: the host\'s own figures, as a reader may see them', async (t) => {
  const up = await run(['uptime'], 'reader');
  t.equal(up.code, 0, up.err);
  t.match(up.out, new RegExp('^up (\\d+d )?(\\d+h )?\\d+m \\d+s, load [\\d.]+ [\\d.]+ [\\d.]+, \\d+ CPUs? '
    + '[\\d.]+% busy since boot, memory \\S+ used of \\S+, \\d+ processes\n$'));
  const json = JSON.parse((await run(['uptime', '-o', 'json'])).out) as
    { uptimeSeconds: number; memoryTotalKib: number };
  const hostUptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  t.ok(Math.abs(json.uptimeSeconds - hostUptime) < 30, `uptime ${json.uptimeSeconds} s is the host's`);
  const total = Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]);
  t.equal(json.memoryTotalKib, total, 'MemTotal');
  t.match((await run(['memory'])).out, /^ +TOTAL +USED +FREE +CACHE +AVAILABLE +OOM KILLS\nMem: +\S+Gi .* \d+\n$/);
});

t.test('ps: the engine and its plugins, each named; netstat: the API port held by the engine', async (t) => {
  const ps = await run(['ps']);
  t.equal(ps.code, 0, ps.err);
  const pid = served.process.pid!;
  t.match(ps.out, new RegExp(`^${pid} +\\d+ +\\w +\\d+ +\\S+ +[\\d.]+s +- +\\S+ serve `, 'm'), 'the engine');
  for (const p of ['network', 'test-reader']) {
    t.match(ps.out, new RegExp(`^\\d+ +${pid} +\\w +\\d+ +\\S+ +[\\d.]+s +${p} +\\S+ plugin ${p}$`, 'm'), p);
  }
  const ns = await run(['netstat']);
  t.match(ns.out, new RegExp(`^tcp +127\\.0\\.0\\.1:${served.port} +0\\.0\\.0\\.0:0 +LISTEN +${pid} +appliance$`, 'm'));
  const sockets = JSON.parse((await run(['netstat', '-o', 'json'])).out) as { sockets: { state: string }[] };
  t.equal(sockets.sockets[0]!.state, 'LISTEN', 'listening first');
  t.match((await run(['mounts'])).out, /^proc +\/proc +proc +\S+$/m);
  t.same([(await run(['ps', '-o', 'yaml'])).code, (await run(['ps', 'x'])).code], [2, 2], 'usage errors');
});

t.test('restart: a new process at once, counted; readers may not; an unknown plugin is named', async (t) => {
  const before = await plugin('test-reader');
  const r = await run(['restart', 'test-reader'], 'operator');
  t.equal(r.code, 0, r.err);
  t.equal(r.out, `plugin test-reader restarted (process ${before.pid} stopped)\n`);
  await until('running again', async () => {
    const now = await plugin('test-reader');
    return now.state === 'running' && now.pid !== before.pid;
  });
  t.equal((await plugin('test-reader')).restarts, before.restarts + 1, 'the restart is counted');
  t.match((await run(['logs', 'test-reader'])).out,
    /exited \(code 0\) to restart, as asked; starting it again/, 'it stopped cleanly on SIGTERM');
  const reader = await run(['restart', 'test-reader'], 'reader');
  t.same([reader.code, reader.err],
    [1, 'cosictl: the reader role may not operate the machine: operators and admins only\n']);
  const nosuch = await run(['restart', 'nosuch']);
  t.equal(nosuch.code, 4);
  t.match(nosuch.err, /no plugin "nosuch"; there are: network, [^\n]*test-reader/);
  t.equal((await run(['restart'])).code, 2);
});
