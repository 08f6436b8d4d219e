// The appliance command's words: help on every command, usage errors with exit 2, a refused definition with every
// problem and exit 1, a valid one summarized with exit 0, and a build refused before anything is written.
import t from 'tap';
import {
  existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from './appliance.ts';

const dir = mkdtempSync(join(tmpdir(), 'appliance-cli-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** main(args), its exit code and what it wrote to stdout and stderr. */
async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [o, e] = [process.stdout.write.bind(process.stdout), process.stderr.write.bind(process.stderr)];
  process.stdout.write = ((s: string) => out.push(s) > 0) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => err.push(s) > 0) as typeof process.stderr.write;
  try {
    return { code: await main(args), out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

t.test('help everywhere; usage errors exit 2 and say where help is', async (t) => {
  const none = await run();
  t.equal(none.code, 2);
  t.match(none.out, /^usage: appliance <command>/);
  t.match((await run('--help')).out, /validate {3}check appliance\.yaml whole[\s\S]*exit codes: 0 done; 1 /);
  for (const c of ['init', 'validate', 'build', 'run', 'push']) {
    const h = await run(c, '--help');
    t.equal(h.code, 0);
    t.match(h.out, new RegExp(`^usage: appliance ${c} \\[(-f FILE|DIR|NAME\\.\\.\\.)\\]`));
    t.equal((await run('help', c)).out, h.out, `appliance help ${c}`);
  }
  const unknown = await run('bulid');
  t.equal(unknown.code, 2);
  t.match(unknown.err, /unknown command "bulid"; one of init, validate, build, run, push/);
  t.match((await run('push', '--persist', '--config')).err, /--config needs a value/);
  t.match((await run('run', '--format', 'iso')).err, /--format: "iso": run boots a disk image, qcow2 or raw/);
  t.match((await run('run', '--memory', 'lots')).err, /--memory: "lots": a whole number of MiB, at least 128/);
  t.match((await run('init', 'a', 'b')).err, /appliance init: one directory, not 2/);
  const option = await run('validate', '--colour', 'blue');
  t.equal(option.code, 2);
  t.match(option.err, /"--colour": not an option of validate \(-f, --file\)/);
  t.match((await run('build', '--format')).err, /--format needs a value/);
});

t.test('validate: every problem with its field (exit 1), or a summary (exit 0)', async (t) => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'apiVersion: appliance.dev/v1alpha1\nkind: Appliance\nname: Kiosk\nversion: 1\ncolour: blue\n');
  const r = await run('validate', '-f', bad);
  t.equal(r.code, 1);
  t.match(r.err, /bad\.yaml: refused, \d+ problem\(s\):\n {2}/);
  t.match(r.err, /colour: unknown field/);
  t.match(r.err, /name: must be/);
  const project = join(dir, 'kiosk');
  mkdirSync(join(project, 'web', 'bin'), { recursive: true });
  writeFileSync(join(project, 'web', 'bin', 'web'), '#!/bin/web\n', { mode: 0o755 });
  writeFileSync(join(project, 'appliance.yaml'), 'apiVersion: appliance.dev/v1alpha1\nkind: Appliance\nname: kiosk\n'
    + 'version: 1.0.0\nextensions:\n  - {name: web, dir: web, executable: /bin/web, ready: "tcp:8080"}\n');
  const good = await run('validate', '-f', join(project, 'appliance.yaml'));
  t.equal(good.code, 0, good.err);
  t.match(good.out, new RegExp('kiosk 1\\.0\\.0: valid\\n {2}extensions: web \\(dir\\)\\n'
    + ' {2}config: 0 document\\(s\\)\\n {2}kernel: the system\'s\\n'
    + ' {2}updates: pushed only \\(no updates:\\)\\n {2}formats: raw\\n'));
  writeFileSync(join(project, 'tun.config'), 'CONFIG_TUN=m\n');
  writeFileSync(join(project, 'appliance.yaml'), 'apiVersion: appliance.dev/v1alpha1\nkind: Appliance\nname: kiosk\n'
    + 'version: 1.0.0\nkernel: {fragment: tun.config, modules: [tun], args: [quiet]}\n');
  const own = await run('validate', '-f', join(project, 'appliance.yaml'));
  t.match(own.out, / {2}kernel: its own, the system's config with tun\.config; args quiet; modules tun\n/);
});

t.test('init: a project that validates; refused, with nothing written, where one is already', async (t) => {
  const project = join(dir, 'My Kiosk');
  const made = await run('init', project);
  t.equal(made.code, 0, made.err);
  t.match(made.out, /made the appliance project my-kiosk in .*My Kiosk:\n {2}appliance\.yaml\n/);
  t.match(made.out, /next \(.*README\.md says more\):\n {2}cd .*My Kiosk\n {2}npm run appliance -- build\n/);
  t.equal(statSync(join(project, 'secrets.yaml')).mode & 0o777, 0o600, 'the secrets: the owner\'s only');
  t.equal(statSync(join(project, 'hello', 'bin', 'hello-web')).mode & 0o111, 0o111, 'the example program runs');
  t.same(readFileSync(join(project, '.gitignore'), 'utf8'), 'out/\nsecrets.yaml\nsigning-key.pem\n');
  t.match(readFileSync(join(project, 'appliance.yaml'), 'utf8'),
    /^# yaml-language-server: \$schema=\.\.\/.*docs\/schemas\/appliance\.schema\.json\n/);
  const valid = await run('validate', '-f', join(project, 'appliance.yaml'));
  t.equal(valid.code, 0, valid.err);
  t.match(valid.out,
    /my-kiosk 0\.1\.0: valid\n {2}extensions: hello \(dir\)\n {2}config: 2 document\(s\), secrets from /);
  const before = readFileSync(join(project, 'appliance.yaml'), 'utf8');
  const again = await run('init', project);
  t.equal(again.code, 1);
  t.match(again.err,
    /appliance\.yaml, README\.md, secrets\.yaml, signing-key\.pem, hello already there; nothing written/);
  t.equal(readFileSync(join(project, 'appliance.yaml'), 'utf8'), before, 'the project as it was');
  const partly = join(dir, 'partly');
  mkdirSync(partly);
  writeFileSync(join(partly, 'README.md'), 'mine\n');
  writeFileSync(join(partly, '.gitignore'), 'node_modules/');
  t.equal((await run('init', partly)).code, 1);
  t.same(readdirSync(partly).sort(), ['.gitignore', 'README.md'], 'a README of the person\'s: nothing written');
  rmSync(join(partly, 'README.md'));
  t.equal((await run('init', partly)).code, 0);
  t.equal(readFileSync(join(partly, '.gitignore'), 'utf8'), 'node_modules/\nout/\nsecrets.yaml\nsigning-key.pem\n',
    'the person\'s .gitignore, added to');
});

t.test('build: a refused definition writes nothing', async (t) => {
  const project = join(dir, 'refused');
  mkdirSync(project);
  writeFileSync(join(project, 'appliance.yaml'), 'apiVersion: appliance.dev/v1alpha1\nkind: Appliance\nname: x\n'
    + 'version: "1"\nextensions:\n  - {name: web, squashfs: missing.squashfs}\n');
  const r = await run('build', '-f', join(project, 'appliance.yaml'));
  t.equal(r.code, 1);
  t.match(r.err, /extensions\[0\]\.squashfs: missing\.squashfs: no such file or directory/);
  t.notOk(existsSync(join(project, 'out')), 'no out/');
  t.match((await run('build', '-f', join(project, 'appliance.yaml'), '--format', 'floppy')).err,
    /--format: unknown floppy; one of raw, /);
});
