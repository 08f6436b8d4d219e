// Whole-system: kernel modules and the clock, in the real image.
// The guest's RTC starts in 2001 (-rtc base=...), so whatever sets the clock shows.
// Time comes from chronyd on the host's 127.0.0.1, which the guest reaches as
// 10.0.2.2 through QEMU's user network.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import type { ConfigFile } from '../cli/config.ts';
import { once } from 'node:events';
import { startChronyd } from '../scripts/lib/chronyd.ts';
import { Tmux } from '../scripts/lib/tmux.ts';
import { bootWithApi } from './api-vm.ts';
import { runProgram } from '../scripts/lib/run-program.ts';

const chrony = await startChronyd();
t.teardown(() => chrony.stop());
// The guest asks chronyd on the host (10.0.2.2), so this VM may reach the host.
// 320 MiB: nine plugin processes (three of them test plugins, one crash-looping) do not fit in 256 MiB
// under this test's load (the OOM killer took the network plugin); the boot-speed issue owns memory.
const { vm, run, poll, cosictl, cosictlConfig, awaitPlugins } = await bootWithApi({
  extraArgs: ['-rtc', 'base=2001-01-01T00:00:00'], hostAccess: true, append: ['appliance.test.plugins'],
  memoryMiB: 320,
});
t.teardown(() => vm.kill());
// The modules are the system plugin's, the links the network plugin's, and the logs test prints through
// test-reader: the tests' waits are for what the machine does, not for plugins still starting.
await awaitPlugins(['network', 'system', 'time', 'test-reader']);
const json = async (args: string[]) => JSON.parse(
  (await run([...args, '-o', 'json'])).out,
) as { spec: Record<string, unknown> };
// The list is sorted and names every shipped module: the test ones among the hardware drivers.
const NOT_SHIPPED = new RegExp('^module "no_such_module" is not shipped in this image '
  + '\\(\\d+ modules are: [a-z0-9_, ]*\\bdummy\\b[a-z0-9_, ]*\\budp_tunnel\\b[a-z0-9_, ]*\\bvxlan\\b');

t.test('a module is loaded with its dependencies and listed; it works; it unloads', async (t) => {
  const applied = await run(['apply', '-f', '-'], [
    'metadata: {type: KernelModuleSpecs.system.appliance.dev, id: vxlan}', 'spec: {}', '---',
    'metadata: {type: modules, id: dummy}', 'spec: {parameters: numdummies=2}', '---',
    'metadata: {type: modules, id: no-such-module}', 'spec: {}', '',
  ].join('\n'));
  t.equal(applied.code, 0, applied.err);
  const lsmod = await poll(
    ['get', 'lsmod'],
    /(?=[\s\S]*\sdummy\s)(?=[\s\S]*\sip6_udp_tunnel\s)(?=[\s\S]*\sudp_tunnel\s)(?=[\s\S]*\svxlan\s)/,
  );
  for (const m of ['vxlan', 'udp_tunnel', 'ip6_udp_tunnel', 'dummy']) t.match(
    lsmod.out, new RegExp(`\\s${m}\\s+\\d+\\s+\\d+\\s`), `${m} listed with its size`,
  );
  t.match(
    (await json(['get', 'lsmod', 'udp_tunnel'])).spec, { requested: false, refCount: 1, usedBy: ['vxlan'] },
    'udp_tunnel is there because vxlan needs it',
  );
  t.match((await json(['get', 'lsmod', 'vxlan'])).spec, { requested: true, refCount: 0 });
  t.same(
    (await json(['get', 'kernelmodulespecstatus', 'vxlan'])).spec.loaded, ['udp_tunnel', 'ip6_udp_tunnel', 'vxlan'],
    'what the spec loaded, dependencies first',
  );
  // The module's parameter took effect: two dummy links, seen by the network plugin.
  t.match((await poll(['get', 'links'], /dummy1/)).out, /dummy0[\s\S]*dummy1/, 'numdummies=2 made two links');
  await poll(['get', 'kernelmodulespecstatus', 'no_such_module'], /error/);
  t.match((await json(['get', 'kernelmodulespecstatus', 'no_such_module'])).spec.error, NOT_SHIPPED);

  t.equal((await run(['delete', 'modules', 'dummy'])).code, 0);
  t.notMatch((await poll(['get', 'links'], /^(?![\s\S]*dummy0)/)).out, /dummy0/, 'unloading removed its links');
  t.notMatch((await poll(['get', 'lsmod'], /^(?![\s\S]*\sdummy\s)/)).out, /\sdummy\s/, 'dummy no longer listed');
  t.match((await json(['get', 'lsmod', 'vxlan'])).spec, { requested: true }, 'the others stay');
});

t.test('logs: every source listed; a followed dmesg shows the kernel\'s words on a module load; plugins\' lines',
  async (t) => {
    const sources = await run(['logs']);
    for (const s of ['engine', 'kernel', 'network', 'system', 'test-reader']) {
      t.match(sources.out, new RegExp(`^${s} `, 'm'), s);
    }
    t.match((await run(['dmesg', '--tail', '2000'])).out, /INFO  init: /, 'PID 1\'s boot lines are in the kernel log');
    t.match((await run(['logs', 'network'])).out, /INFO  \S+: /, 'the network plugin\'s lines');
    const follow = spawn(cosictl, ['--config', cosictlConfig, 'dmesg', '-f', '--tail', '1']);
    let out = '';
    follow.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    t.teardown(() => {
      follow.kill('SIGKILL');
    });
    for (let i = 0; i < 100 && !out; i++) await new Promise((r) => setTimeout(r, 100));
    // The kernel names a parameter a module does not have when it loads it.
    const applied = await run(['apply', '-f', '-'],
      'metadata: {type: modules, id: dummy}\nspec: {parameters: logs_test_param=1}\n');
    t.equal(applied.code, 0, applied.err);
    for (let i = 0; i < 300 && !/dummy: unknown parameter/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
    t.match(out, /^\S+Z WARN  dummy: unknown parameter 'logs_test_param' ignored$/m, 'the followed kernel log');
    follow.kill('SIGINT');
    t.equal((await once(follow, 'exit'))[0], 0, 'Ctrl-C ends the follow');
    t.equal((await run(['delete', 'modules', 'dummy'])).code, 0);
    await run(['apply', '-f', '-'],
      'metadata: {type: TestFileReads.test.appliance.dev, id: logs}\nspec: {path: /nope}\n');
    t.match((await poll(['logs', 'test-reader'], /logs: cannot read/)).out,
      /WARN  test-reader: logs: cannot read \/nope: ENOENT/, 'a test plugin that prints');
  });

t.test('views without a shell: ps, netstat, mounts, uptime; restart a plugin and it carries on', async (t) => {
  const ps = await run(['ps']);
  t.match(ps.out, /^1 +0 +\w +\d+ +\S+ +[\d.]+s +- +\/system\/image\/init\b/m, 'PID 1 is the init from the image');
  t.match(ps.out, /^\d+ +1 +\w +\d+ +\S+ +[\d.]+s +network +/m, 'the network plugin, a child of PID 1');
  t.match((await run(['netstat'])).out, /^tcp +0\.0\.0\.0:50000 +0\.0\.0\.0:0 +LISTEN +1 +\S+$/m,
    'PID 1 serves :50000');
  t.match((await run(['mounts'])).out, /^\S+ +\/system\/image +squashfs +ro,/m, 'the system image, read-only');
  t.match((await run(['uptime'])).out, /^up \d+m \d+s, load /);
  const before = JSON.parse((await run(['get', 'plugins', 'network', '-o', 'json'])).out) as
    { spec: { pid: number; restarts: number } };
  const r = await run(['restart', 'network']);
  t.equal(r.code, 0, r.err);
  const after = await poll(['get', 'plugins', 'network', '-o', 'json'],
    new RegExp(`"state": "running"[^]*"restarts": ${before.spec.restarts + 1}`));
  t.not((JSON.parse(after.out) as { spec: { pid: number } }).spec.pid, before.spec.pid, 'a new process');
  // The new process takes the links over: an address declared now is applied.
  await run(['apply', '-f', '-'], 'metadata: {type: addressspec, id: after-restart}\nspec: {address: 10.0.2.77/24, '
    + 'link: eth0}\n');
  t.match((await poll(['get', 'addressspecstatus', 'eth0/10.0.2.77/24'], /applied/)).out, /applied/);
  t.equal((await run(['delete', 'addressspec', 'after-restart'])).code, 0);
});

t.test('an RTC before the build: the clock starts at the build\'s date, then an NTP server sets it; the RTC is '
  + 'written back', async (t) => {
  const before = (await json(['get', 'time', 'clock'])).spec;
  t.match(before, {
    synced: false, source: 'rtc', rtcSetClock: 'kernel', error: 'no time servers configured (TimeServerSpec)',
    floor: /^20\d\d-/, clockProblem: /^the RTC read 2001-01-01T00:0\d:\d\dZ at boot, before this build was made: /,
  });
  t.match(before.rtcAtBoot, /^2001-01-01T00:0/, 'the RTC said 2001 at boot');
  t.match(vm.console(), /clock: it read 2001-01-01T00:00:\d\d\.\d+Z, before this build was made: moved forward to /,
    'PID 1 moved the clock to the floor');

  const applied = await run(
    ['apply', '-f', '-'], `metadata: {type: timeservers, id: user}\nspec: {servers: ["10.0.2.2:${chrony.port}"]}\n`,
  );
  t.equal(applied.code, 0, applied.err);
  const synced = JSON.parse(
    (await poll(['get', 'time', 'clock', '-o', 'json'], /"synced": true/, 60_000)).out,
  ).spec as Record<string, unknown>;
  t.match(synced, {
    synced: true, source: 'sntp', server: `10.0.2.2:${chrony.port}`, stratum: 8, correction: 'step',
  });
  // From the floor (the commit's time) to now: forward, by less than the years the RTC was behind.
  const days = (synced.offsetMs as number) / 86400e3;
  t.ok(days > 0 && days < 365, `stepped forward ${days.toFixed(3)} days from the floor`);
  t.notOk(synced.clockProblem, 'synced: nothing wrong with the clock now');
  t.ok(
    Math.abs(Date.parse(synced.lastSync as string) - Date.now()) < 60_000,
    `guest clock now ${synced.lastSync as string}, host ${new Date().toISOString()}`,
  );
  t.ok(
    Math.abs(Date.parse(synced.rtcWritten as string) - Date.now()) < 60_000, 'the RTC was written with the synced time',
  );
});

/** A file of the guest, or a listing of a tree, read back through the test-reader plugin. */
async function guestFile(id: string, path: string, walk = false): Promise<string> {
  await run(['apply', '-f', '-'], `metadata: {type: TestFileReads.test.appliance.dev, id: ${id}}\n`
    + `spec: {path: "${path}", walk: ${walk}}\n`);
  const r = await poll(['get', 'TestFileContents.test.appliance.dev', id, '-o', 'json'], /"(content|error)"/);
  const spec = (JSON.parse(r.out) as { spec: { content?: string; error?: string } }).spec;
  if (spec.error) throw new Error(`${path}: ${spec.error}`);
  return spec.content ?? '';
}

t.test('the dashboard in a terminal: an address declared and a plugin\'s line appear as they happen', async (t) => {
  const term = await Tmux.start('dashboard', [cosictl, '--config', cosictlConfig, 'dashboard'],
    { columns: 140, rows: 45, env: { TERM: 'xterm-256color' } });
  t.teardown(() => term.kill());
  // The first frame comes before the machine's answers: wait for them.
  const first = await term.waitFor(/(?=[^]*^up )(?=[^]*^ {2}eth0 )(?=[^]*^TIME {2}synced)(?=[^]*^LOGS\n\d)/m, 30_000);
  t.match(first, /^up \S+.* memory \S+ of \S+ +\d+ processes$/m, 'the machine\'s figures');
  t.match(first, /^ {2}eth0 +up +52:54:\S+ +10\.0\.2\.15\/24/m, 'eth0 and its address');
  t.match(first, /^TIME {2}synced from 10\.0\.2\.2/m, 'the clock, synced by the test before');
  t.match(first, /^ {2}issue running +network running/m, 'the plugins');
  const applied = await run(['apply', '-f', '-'], [
    'metadata: {type: addressspec, id: dashboard}', 'spec: {address: 10.0.2.78/24, link: eth0}', '---',
    'metadata: {type: TestFileReads.test.appliance.dev, id: dashboard}', 'spec: {path: /nope-dashboard}', '',
  ].join('\n'));
  t.equal(applied.code, 0, applied.err);
  // Gone whatever the assertions say: the tests after this one see the machine as it was.
  t.teardown(async () => {
    await run(['delete', 'addressspec', 'dashboard', '--ignore-not-found']);
    await run(['delete', 'TestFileReads.test.appliance.dev', 'dashboard', '--ignore-not-found']);
  });
  const seen = await term.waitFor(/(?=[^]*^ {2}eth0 +up .*10\.0\.2\.78\/24)(?=[^]*nope-dashboard)/m, 30_000);
  t.match(seen, /^ {2}eth0 +up .*10\.0\.2\.78\/24/m, 'the address on eth0');
  t.match(seen, /^\d\d:\d\d:\d\d test-reader WARN {2}test-reader: dashboard: cannot read \/nope-dashboard/m,
    'the plugin\'s line in the logs pane');
  t.match(await term.screen(true), /\x1b\[32mrunning/, 'colors in a terminal that has them');
  await term.keys('q');
  t.equal(await term.waitExit(), 0, 'q quits');
});

t.test('hardened at run time: kernel parameters, nothing setuid or world-writable, plugins filtered', async (t) => {
  const params: [string, string][] = [['kernel.kptr_restrict', '2'], ['kernel.dmesg_restrict', '1'],
    ['kernel.yama.ptrace_scope', '2'], ['fs.protected_symlinks', '1'], ['fs.protected_regular', '2'],
    ['kernel.unprivileged_bpf_disabled', '2'], ['net.ipv4.conf.all.accept_redirects', '0']];
  for (const [key, value] of params) {
    t.match((await poll(['get', 'kernelparamspecstatus', key, '-o', 'yaml'], /state: applied/)).out,
      new RegExp(`state: applied[\\s\\S]*value: "?${value}"?[\\s\\S]*layer: default`), `${key} = ${value}`);
  }
  // eth0 existed before PID 1 set `default` (its driver is built in): its own values are set too.
  for (const ip of ['ipv4', 'ipv6']) {
    const path = `/proc/sys/net/${ip}/conf/eth0/accept_redirects`;
    t.equal((await guestFile(`redirects-${ip}`, path)).trim(), '0', path);
  }
  const listing = await guestFile('root', '/', true);
  const entries = listing.split('\n').map((l) => {
    const [mode, path] = l.split(' ');
    return { mode: parseInt(mode!, 8), path: path! };
  });
  t.ok(entries.some((e) => e.path === '/init') && entries.some((e) => e.path === '/system/image/init')
    && entries.some((e) => e.path.startsWith('/system/image/lib/modules/')),
  `the walk saw the initramfs and the system image mounted in it (${entries.length} entries)`);
  t.same(entries.filter((e) => e.mode & 0o6000).map((e) => e.path), [], 'no setuid or setgid file');
  t.same(entries.filter((e) => (e.mode & 0o170000) === 0o100000 && e.mode & 0o002).map((e) => e.path), [],
    'no world-writable file');
  t.same(entries.filter((e) => (e.mode & 0o170000) === 0o040000 && e.mode & 0o002 && !(e.mode & 0o1000))
    .map((e) => e.path), [], 'no world-writable directory without the sticky bit');
  t.same(entries.filter((e) => /\/(sh|bash|dash|ash|busybox|python[\d.]*|perl[\d.]*|ruby|lua|node)$/.test(e.path))
    .map((e) => e.path), [], 'no shell and no interpreter');
  // The issue renderer only transforms state: it runs inside PID 1's engine (Plugin.inEngine), not as a process.
  const issue = (await json(['get', 'plugins', 'issue'])).spec as { pid: number; state: string };
  t.same([issue.state, issue.pid], ['running', 1], 'issue runs in PID 1');
  for (const name of ['network', 'platform', 'storage', 'system', 'time', 'test-reader']) {
    const { pid, state } = (await json(['get', 'plugins', name])).spec as { pid: number; state: string };
    t.equal(state, 'running', `${name} runs`);
    if (state !== 'running') continue;
    const status = await guestFile(`status-${name}`, `/proc/${pid}/status`).catch(async (e: Error) => {
      const plugins = (await run(['get', 'plugins', '-o', 'yaml'])).out;
      throw new Error(`${e.message}\n${plugins}\n${vm.console().slice(-4000)}`);
    });
    t.match(status, /^Seccomp:\s+2$/m, `${name}: under a seccomp filter`);
    t.match(status, /^NoNewPrivs:\s+1$/m, `${name}: no_new_privs`);
  }
});

t.test('two machines at once: a context with both, one table with a NODE column; one gone is named', async (t) => {
  const second = await bootWithApi();
  t.teardown(() => second.vm.kill());
  const file = YAML.parse(readFileSync(cosictlConfig, 'utf8')) as ConfigFile;
  const { endpoint, ...credentials } = file.contexts!.vm!;
  const both = join(dirname(cosictlConfig), 'both.yaml');
  writeFileSync(both, YAML.stringify({ context: 'both', contexts: {
    both: { ...credentials, endpoints: [endpoint, second.endpoint] } } }), { mode: 0o600 });
  const runBoth = (args: string[]) => runProgram(cosictl, ['--config', both, ...args]);
  const rows = (out: string, node: string) => out.split('\n').filter((l) => l.startsWith(`${node} `));
  const links = await runBoth(['get', 'links']);
  t.equal(links.code, 0, links.err);
  t.match(links.out, /^NODE +NAMESPACE +TYPE +ID /);
  for (const node of [endpoint!, second.endpoint]) {
    t.match(rows(links.out, node).join('\n'), /\snetwork +LinkStatus +eth0 /, `${node}: its eth0`);
  }
  const modules = await runBoth(['get', 'lsmod', 'vxlan']);
  t.equal(modules.code, 4, 'vxlan is loaded on the first machine only');
  t.equal(rows(modules.out, endpoint!).length, 1);
  t.match(modules.err, `cosictl: node ${second.endpoint}: no KernelModuleStatus "vxlan"`);
  second.vm.kill();
  await once(second.vm.process, 'exit');
  const gone = await runBoth(['--timeout', '5s', 'uptime']);
  t.equal(gone.code, 5, 'the machine that went away');
  t.match(rows(gone.out, endpoint!)[0], /^\S+ {2}up /, 'the other still answers');
  t.match(gone.err, `cosictl: node ${second.endpoint}: `);
});

t.test('power-off after all that is clean', async (t) => {
  const exit = await vm.powerdown(60_000);
  t.ok(exit.clean);
  t.equal(exit.code, 0);
});
