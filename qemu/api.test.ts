// Whole-system test of the COSI API: boot the image, forward the API port, and use
// the built cosictl against it: read the engine's resources, apply one, watch it
// change as the issue plugin (a separate process in the guest) renders it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi, type CliResult } from './api-vm.ts';
import { READY_RE } from '../init/boot/ready-line.ts';
import { RemoteState } from '../cosi/remote/client.ts';
import { addFinalizer, removeFinalizer } from '../cosi/state/finalizers.ts';
import { SHUTDOWN_REQUEST_TYPE } from '../proto/gen/resource-types.ts';
import { SHUTDOWN_REQUEST_ID } from '../machinery/model/singleton-ids.ts';

const READY_RE_GLOBAL = new RegExp(READY_RE.source, 'g');

// The guest's reboot restarts it (no -no-reboot): a reboot through the API must bring it back.
// `health --wait` starts with QEMU, as a user types it right after `npm start`: before the API answers.
let healthAtStart: Promise<CliResult> | undefined;
const { vm, cosictl, cosictlConfig, run, poll, endpoint, tls } = await bootWithApi({ noReboot: false }, 'static', {
  onLaunch: (_vm, cli) => {
    healthAtStart = cli(['health', '--wait', '5m'], undefined, 330_000);
  },
});
t.teardown(() => vm.kill());
const dir = mkdtempSync(join(tmpdir(), 'api-test-'));

t.test('health --wait, typed as QEMU starts, waits for the API, then for every check', async (t) => {
  const r = await healthAtStart!;
  t.equal(r.code, 0, r.err);
  t.match(r.err, /^waiting: the API does not answer yet: /, 'it said why it waited');
  t.match(r.out, /^ok {4}api: serving\n/);
});

t.test('boots and serves the API on the forwarded port', async (t) => {
  t.match(vm.console(), /phase api done in/);
  const v = await run(['get', 'versions']);
  t.equal(v.code, 0, v.err);
  t.match(v.out, /runtime\s+Version\s+appliance\s+1\s+0\.1\.0/);
  const boot = await run(['get', 'bootstatus', 'boot', '-o', 'json']);
  t.same(
    (JSON.parse(boot.out) as { spec: { phase: string; ready: boolean } }).spec.ready, true, 'boot status says ready',
  );
  const cmd = await run(['get', 'cmdline', 'current', '-o', 'yaml']);
  t.match(cmd.out, /ip: 10\.0\.2\.15::10\.0\.2\.2:255\.255\.255\.0::eth0:off/, 'kernel command line parsed');
  const plugins = await run(['get', 'plugins']);
  t.match(plugins.out, /issue\s+\d+\s+running/);
});

t.test('the network plugin applied ip= and takes addresses through the API', async (t) => {
  const link = JSON.parse(
    (await run(['get', 'links', 'eth0', '-o', 'json'])).out,
  ) as { spec: { up: boolean; type: string; mac: string } };
  t.same([link.spec.up, link.spec.type], [true, 'ether'], 'eth0 up, observed through netlink');
  t.match(
    (await poll(['get', 'addressspecstatus', 'eth0/10.0.2.15/24'], /applied/)).out,
    /10\.0\.2\.15\/24\s+eth0\s+applied\s+cmdline/,
  );
  t.match(
    (await poll(['get', 'routespecstatus', '0.0.0.0/0/1024'], /applied/)).out, /10\.0\.2\.2\s+eth0\s+applied\s+cmdline/,
  );
  const added = await run(
    ['apply', '-f', '-'], 'metadata: {type: addressspec, id: extra}\nspec: {address: 10.0.2.99/24, link: eth0}\n',
  );
  t.equal(added.code, 0, added.err);
  const st = (await poll(['get', 'addressspecstatus', 'eth0/10.0.2.99/24'], /applied/)).out;
  t.match(st, /10\.0\.2\.99\/24\s+eth0\s+applied\s+config/, 'static address applied');
  t.equal(
    (await run(['delete', 'addressspec', 'extra'])).code, 0,
    'removed (the plugin releases its finalizer after deleting the address)',
  );
  t.equal((await run(['get', 'addressspec', 'extra'])).code, 4);
  const applied = await run(
    ['apply', '-f', '-'], 'metadata: {type: addressspec, id: ghost}\nspec: {address: 10.9.9.9/24, link: eth9}\n',
  );
  t.equal(applied.code, 0, applied.err);
  t.match(applied.err,
    /^warning: addressspec\/ghost: the machine has no link "eth9" \(it has eth0, lo\b[^)]*\); applied/m,
    'said at apply time, naming the links there are');
  const ghost = (await poll(['get', 'addressspecstatus', 'eth9/10.9.9.9/24', '-o', 'yaml'], /pending/)).out;
  t.match(ghost, /state: pending[\s\S]*link "eth9" does not exist/, 'an unknown link shows in the status');
  // What get prints applies back: the specs of the machine's own layers are skipped, each said.
  const specs = await run(['get', 'linkspec,addressspec', '-o', 'yaml']);
  const foreign = [...specs.out.matchAll(/^ {2}layer: (default|cmdline|platform|dhcp)$/gm)].length;
  t.ok(foreign > 0, `the machine's own layers' specs are listed (${foreign})`);
  const back = await run(['apply', '-f', '-'], specs.out);
  t.equal(back.code, 0, back.err);
  t.equal([...back.err.matchAll(/^ignored: stdin: document \d+ \(\w+ \S+\): the \w+ layer belongs to .*: skipped;/gm)]
    .length, foreign, 'each skipped document said');
});

t.test('kubectl\'s habits on the machine: get all, -A, --field-selector, explain T.F, describe T, wait, events',
  async (t) => {
    const all = await run(['get', 'all']);
    t.equal(all.code, 0, all.err);
    t.match(all.out, /\nnetwork +LinkStatus +eth0 /, 'get all: the links among every type');
    const everywhere = await run(['get', 'addressspecs', '-A', '--field-selector', 'spec.link=eth0', '-o', 'name']);
    t.equal(everywhere.code, 0, everywhere.err);
    t.match(everywhere.out, /^addressspec\/cmdline\/eth0$/m, '-A with --field-selector');
    t.match((await run(['explain', 'linkspec.mtu'])).out, /^FIELD: +mtu <integer, 68 to 65535>/m, 'explain T.F');
    const described = await run(['describe', 'mergedlinkspec']);
    t.match(described.out, /^ID: +eth0$/m, 'describe TYPE: each of them');
    const ready = await run(['wait', 'linkspecstatus/eth0', '--for=jsonpath={.spec.state}=applied']);
    t.same([ready.code, ready.err], [0, ''], 'wait --for=jsonpath on what a plugin writes');
    const events = await run(['events', 'addressspecstatus']);
    t.match(events.out, /AddressSpecStatus network\/eth0\/10\.0\.2\.15\/24 (created|changed)/, 'events of a type');
    const bare = await run([]);
    t.same([bare.code, bare.out.startsWith('usage: cosictl ')], [0, true], 'bare cosictl: help');
    t.match((await run(['get', 'lnkspec'])).err, /did you mean linkspec\?/, 'did you mean, from the machine\'s types');
    const motds = 'metadata: {type: motd, id: vm-1}\nspec: {text: one}\n---\nmetadata: {type: motd, id: vm-2}\n'
      + 'spec: {text: two}\n';
    t.equal((await run(['apply', '-f', '-'], motds)).code, 0);
    t.match((await run(['get', 'motd/vm-1', '-o', 'yml'])).out, /^ {2}id: vm-1$/m, 'TYPE/ID, -o yml');
    const changed = motds.replace('text: two', 'text: deux');
    const diffFile = join(dir, 'motds.yaml');
    writeFileSync(diffFile, changed);
    t.equal((await run(['diff', '-f', diffFile])).code, 1, 'diff: exit 1 when apply would change something');
    const gone = await run(['delete', 'motd', '--all']);
    t.match(gone.out, /^motd\/vm-1 deleted\nmotd\/vm-2 deleted\n$/, 'delete TYPE --all');
    const inEngine = await run(['restart', 'issue']);
    t.not(inEngine.code, 0, 'restart of a plugin that runs inside the engine is refused');
    t.match(inEngine.err, /issue runs inside the engine \(PID 1\)[^]*nothing to restart/);
    t.equal((await run(['restart', 'time'])).code, 0);
    await poll(['get', 'plugins'], /\btime\s+\d+\s+running/, 60_000);
    const previous = await run(['logs', 'time', '--previous']);
    t.equal(previous.code, 0, previous.err);
    t.match(previous.out, /^\S+Z /m, 'logs --previous: the run before the restart');
  });

t.test('apply a resource and watch the plugin react', async (t) => {
  const w = spawn(cosictl, ['--config', cosictlConfig, 'get', 'issues', '--watch', '-o', 'yaml']);
  let out = '';
  w.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  const waitFor = async (re: RegExp, ms = 30_000) => {
    for (let i = 0; i < ms / 50 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    return re.test(out);
  };
  t.ok(await waitFor(/appliance 0\.1\.0/), 'the current banner arrives first');
  const applied = await run(
    ['apply', '-f', '-'], 'metadata: {type: motd, id: welcome}\nspec: {text: Welcome to the VM test}\n',
  );
  t.equal(applied.out, 'motd/welcome created\n', applied.err);
  t.ok(await waitFor(/Welcome to the VM test/), 'the watch shows the banner change');
  await run(['apply', '-f', '-'], 'metadata: {type: motd, id: welcome}\nspec: {text: Changed again}\n');
  t.ok(await waitFor(/Changed again/), 'and the next change');
  w.kill('SIGINT');
  const bad = await run(['apply', '-f', '-'], 'metadata: {type: motd, id: bad}\nspec: {text: 5}\n');
  t.equal(bad.code, 3, 'invalid input refused');
});

t.test('cosictl reboot: a holder delays it 5 s, then the machine comes back to ready', async (t) => {
  const holder = new RemoteState(endpoint, { tls: tls('operator') });
  t.teardown(() => holder.close());
  const shutdown = { namespace: 'runtime', type: SHUTDOWN_REQUEST_TYPE, id: SHUTDOWN_REQUEST_ID };
  await addFinalizer(holder, shutdown, 'vm-test-hold');
  const readyLines = () => vm.console().match(READY_RE_GLOBAL)?.length ?? 0;
  const before = readyLines();
  const reboot = run(['reboot', '--grace', '60s', '--wait', '4m', '--id', 'api-test'], undefined, 300_000);
  const machine = await poll(['get', 'machinestatus', 'machine', '-o', 'json'], /"stopping"/);
  t.match(JSON.parse(machine.out), { spec: { stage: 'stopping', action: 'reboot', heldBy: ['vm-test-hold'],
    reason: 'API power request "api-test"' } }, 'MachineStatus: stopping, why, held by whom');
  await new Promise((r) => setTimeout(r, 5000));
  t.notMatch(vm.console(), /reboot now \(shutdown took/, 'nothing stopped while held');
  await removeFinalizer(holder, shutdown, 'vm-test-hold');
  const r = await reboot;
  t.equal(r.code, 0, r.err);
  t.match(r.out, /the machine is back and ready/);
  t.match(r.err, /^reboot: down: not answering \(\d+ s\)$/m, 'it said what it saw: the machine down');
  t.notMatch(r.err, /nothing listens/, 'a rebooting VM\'s forward accepts: not taken for a machine gone');
  t.match(vm.console(), /reboot: every holder let go \(vm-test-hold\)/);
  t.match(vm.console(), /reboot: Restarting system/);
  t.equal(readyLines(), before + 1, 'a second ready line: it booted again');
  const after = await run(['get', 'machinestatus', 'machine', '-o', 'json']);
  t.match(JSON.parse(after.out), { spec: { stage: 'running' } }, 'running again');
});

t.test('cosictl shutdown powers off cleanly with plugins running; a watch says why it ended', async (t) => {
  const watching = run(['get', 'plugins', '-w'], undefined, 120_000);
  await new Promise((r) => setTimeout(r, 2000));
  const r = await run(['shutdown', '--id', 'now']);
  t.equal(r.code, 0, r.err);
  const w = await watching;
  t.same([w.code, w.err], [5, 'cosictl: the watch ended: the machine is powering off: API power request "now"\n'],
    'the watch ended saying why, not blaming the certificate');
  const timeout = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), 60_000).unref());
  const exit = await Promise.race([vm.exited, timeout]);
  t.not(exit, 'timeout', 'QEMU exited by itself');
  t.equal(exit === 'timeout' ? -1 : exit.code, 0);
  t.match(vm.console(), /poweroff requested: API power request "now"/);
  t.match(vm.console(), /unmounted \d+ filesystem/);
  t.notMatch(vm.console(), /Kernel panic|uncaught exception/);
});
