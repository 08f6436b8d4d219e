// readme: the README's cosictl examples ("The COSI API and cosictl"), run exactly as written,
// in order, from the repository's root: the first boots the machine with `npm start`, the
// others talk to it through out/dev's context. Only what a person would bring is the test's:
// an editor for `edit`, and Ctrl-C for the watch and, at the end, for the machine.
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { commandsOf, readmeBlock, signalGroup } from './readme-commands.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const commands = commandsOf(readmeBlock(readme, 'The COSI API and cosictl'));
const dir = mkdtempSync(join(tmpdir(), 'readme-'));
// The person's editor: changes the text and quits.
const editor = join(dir, 'editor');
writeFileSync(editor, `#!/bin/sh\nsed -i 's/text: Hello$/text: Hello again/' "$1"\n`);
chmodSync(editor, 0o755);
const env = { ...process.env, COSICTL_EDITOR: editor };
const exports: string[] = [];
// The examples write these where they run; one that was there before is the person's.
for (const written of ['motds.yaml', 'support.tar.gz'].map((f) => join(ROOT, f))) {
  const persons = existsSync(written) ? readFileSync(written) : undefined;
  t.teardown(() => (persons ? writeFileSync(written, persons) : rmSync(written, { force: true })));
}

interface Ran {
  code: number | null; signal: string | null; out: string; err: string;
  /** Why it was sent Ctrl-C: its output came (`until`) or it ran out of time. */
  interrupted?: 'until' | 'timeout';
}
function sh(command: string, o: { until?: RegExp; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const c = spawn('bash', ['-c', [...exports, command].join('\n')], { cwd: ROOT, env, detached: true });
    let out = '';
    let err = '';
    let interrupted: Ran['interrupted'];
    const interrupt = (why: 'until' | 'timeout') => {
      interrupted ??= why;
      signalGroup(c, 'SIGINT');
    };
    c.stdout.on('data', (d: Buffer) => {
      out += d;
      if (o.until?.test(out)) interrupt('until');
    });
    c.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    const timer = setTimeout(() => interrupt('timeout'), o.timeoutMs ?? 60_000);
    c.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err, ...(interrupted ? { interrupted } : {}) });
    });
  });
}

const [start, ...rest] = commands;
t.match(start, /^npm start -- --hostfwd 50000:50000\b/, 'the block starts the machine');
let machine: ChildProcess | undefined;
let booted = false;
let vmDir: string | undefined;
let machineOutput = '';
const stopped = new Promise<number | null>((resolve) => {
  machine = spawn('bash', ['-c', start!], { cwd: ROOT, env, detached: true });
  machine.stdout!.on('data', (d: Buffer) => {
    machineOutput += d;
  });
  machine.stderr!.on('data', (d: Buffer) => {
    machineOutput += d;
  });
  machine.on('close', (code) => resolve(code));
});
// QEMU runs in a process group of its own: start.ts kills it on SIGTERM (it would outlive a SIGKILL of start).
t.teardown(async () => {
  signalGroup(machine!, 'SIGTERM');
  await Promise.race([stopped, new Promise((r) => setTimeout(r, 10_000))]);
  signalGroup(machine!, 'SIGKILL');
});

t.test('the machine npm start boots answers through out/dev\'s context', async (t) => {
  const deadline = Date.now() + 300_000;
  let r: Ran;
  do {
    await new Promise((x) => setTimeout(x, 2000));
    r = await sh('COSICTL_CONFIG=out/dev/cosictl.yaml out/cosictl get versions', { timeoutMs: 20_000 });
  } while (r.code !== 0 && Date.now() < deadline && machine!.exitCode === null);
  booted = t.equal(r.code, 0, `${r.err}\nconsole:\n${machineOutput.slice(-3000)}`);
  // Where this QEMU keeps its QMP socket: launch's temporary directory, which must go with it.
  const pid = /\[start\] QEMU pid (\d+)/.exec(machineOutput)?.[1];
  const args = pid ? readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') : [];
  vmDir = args.map((a) => /^unix:(\/\S+)\/qmp\.sock,/.exec(a)?.[1]).find((d) => d !== undefined);
  t.ok(vmDir && existsSync(vmDir), `QEMU's temporary directory: ${vmDir}`);
});

/** What particular examples must show besides exit 0; each must be found in the block (a reworded one fails). */
const CHECKS: { example: RegExp; check: (t: Test, r: Ran, name: string) => Promise<void> | void }[] = [
  {
    example: / apply -f -$/,
    check: (t, r, name) => { t.match(r.out, /^motd\/hi (created|configured|unchanged)/m, name); },
  },
  {
    example: / edit motd hi\b/,
    check: async (t, r, name) => {
      t.match(r.out, /^motd\/hi configured$/m, `${name}: the edit was applied`);
      const now = await sh('out/cosictl get motd hi -o yaml');
      t.equal((YAML.parse(now.out) as { spec: { text: string } }).spec.text, 'Hello again');
    },
  },
  {
    example: / --watch\b/,
    check: (t, r, name) => {
      t.match(r.out, /^ +NAMESPACE +TYPE +ID +VERSION\b.*\n\+ +runtime +Issue +banner /, `${name}: the table`);
    },
  },
  {
    example: / logs network --tail 20/,
    check: (t, r, name) => { t.match(r.out, /^\S+Z INFO  \S+: /m, `${name}: the network plugin's lines`); },
  },
  {
    example: / dmesg --tail 50/,
    check: (t, r, name) => { t.equal(r.out.trim().split('\n').length, 50, `${name}: 50 lines of the kernel log`); },
  },
  {
    example: / support -o support\.tar\.gz/,
    check: (t, r, name) => {
      t.match(r.err, /^support: \d+ resources, \d+ logs -> support\.tar\.gz/m, name);
      t.ok(existsSync(join(ROOT, 'support.tar.gz')), `${name}: the file`);
    },
  },
  {
    example: /cosictl ps$/,
    check: (t, r, name) => { t.match(r.out, /^1 +0 .*\/system\/image\/init/m, `${name}: PID 1`); },
  },
  {
    example: /cosictl dashboard$/,
    check: (t, r, name) => {
      t.match(r.out, /^PLUGINS\n[^]*^LINKS\n[^]*eth0 +up [^]*^LOGS\n/m, `${name}: into a pipe, the screen once`);
    },
  },
  {
    example: / health --wait \w+/,
    check: (t, r, name) => {
      t.match(r.out, /^ok +api: serving\n[^]*^ok +addresses: on eth0/m, `${name}: every check`);
    },
  },
  { example: / diff -f motds\.yaml/, check: (t, r, name) => { t.match(r.err, /^no differences$/m, name); } },
  { example: / delete -f motds\.yaml/, check: (t, r, name) => { t.match(r.out, /^motd\/hi deleted$/m, name); } },
  {
    example: / describe mergedlinkspec eth0/,
    check: (t, r, name) => {
      t.match(r.out,
        /^Kind: +MergedLinkSpec\n[^]*\nRelated: LinkSpec \S+ \(layer \w+, [^]*Related: Link(Spec)?Status eth0 /,
        `${name}: the layers' specs and the status`);
      t.match(r.out, /\nTimeline \(/, `${name}: and their timeline`);
    },
  },
  {
    example: / reboot --wait 5m/,
    check: (t, r, name) => {
      t.match(r.out, /^the machine is back and ready$/m, `${name}: npm start's QEMU let the machine reboot`);
      t.match(machineOutput, /reboot: Restarting system/, `${name}: the guest rebooted`);
    },
  },
  {
    example: /^source <\(out\/cosictl completion bash\)/,
    check: async (t, _r, name) => {
      const tab = await sh(`${name}; COMP_WORDS=(out/cosictl get mot); COMP_CWORD=2; _cosictl
echo "\${COMPREPLY[*]}"`);
      t.equal(tab.out, 'motds motd\n', `${name}: then Tab completes a type`);
    },
  },
];

t.test('each example, as written', async (t) => {
  if (!booted) {
    t.fail('the machine npm start boots never answered: no example can run');
    return;
  }
  const found = new Set<number>();
  for (const command of rest) {
    const name = command.split('\n').at(-1)!.replace(/\s+#.*$/, '');
    if (/^export /.test(command)) {
      exports.push(command);
      continue;
    }
    const watching = /--watch/.test(command);
    // A --wait example may take its time (a reboot under TCG): as long as it says, and a little more.
    const waits = /--wait (\d+)m\b/.exec(command);
    const r = await sh(command, watching ? { until: /\n.*\n/, timeoutMs: 30_000 }
      : waits ? { timeoutMs: Number(waits[1]) * 60_000 + 30_000 } : {});
    if (watching) t.equal(r.interrupted, 'until', `${name}: printed its table, then Ctrl-C`);
    else t.equal(r.interrupted, undefined, `${name}: ended by itself`);
    t.equal(r.code, 0, `${name}\n${r.err}`);
    t.notMatch(r.out + r.err, /undefined|NaN|\[object Object\]/, `${name}: no undefined in what it printed`);
    for (const [i, c] of CHECKS.entries()) {
      if (!c.example.test(command)) continue;
      found.add(i);
      await c.check(t, r, name);
    }
  }
  t.same(CHECKS.filter((_, i) => !found.has(i)).map((c) => c.example.source), [], 'every checked example is there');
});

t.test('Ctrl-C on npm start powers the machine down', async (t) => {
  signalGroup(machine!, 'SIGINT');
  const code = await Promise.race([stopped, new Promise((r) => setTimeout(() => r('still running'), 90_000))]);
  t.not(code, 'still running', machineOutput.slice(-2000));
  t.match(machineOutput, /\[start\] powering down \(ACPI power button\)/);
  t.match(machineOutput, /reboot: Power down/, 'the guest shut down');
  t.match(machineOutput, /\[start\] QEMU exited \(code 0\)/, 'and QEMU with it, not killed');
  await new Promise((r) => setTimeout(r, 500));
  t.notOk(vmDir && existsSync(vmDir), 'its temporary directory is gone with it');
  // The engine's console lines ([init 12.345] who: WARN what): none from boot through the reboot to power-down.
  const warned = machineOutput.split('\n').filter((l) => /^\[\w+ [\d.]+\] (?:\S+: )?(?:WARN|ERROR) /.test(l));
  t.same(warned, [], 'a healthy machine printed no warning nor error all along');
});
