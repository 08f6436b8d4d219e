// cosictl as a daily tool, end to end: the built client against the built engine (`appliance
// serve`) over a real socket: flags each command takes, help and version, label selectors,
// delete's reports, apply's round trips and inputs (directories, URLs, several files), broken
// YAML shown where it is, contexts, and calls that fail fast or end when the machine goes away.
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import { Tmux } from '../scripts/lib/tmux.ts';
import { runProgram, type Ran } from '../scripts/lib/run-program.ts';
import { newResource } from '../cosi/resource/resource.ts';
import { LINK_SPEC_TYPE } from '../proto/gen/resource-types.ts';

const a = artifacts();
const cosictl = join(a.dir, 'cosictl');
const served = await startServe(a.exe);
t.teardown(() => served.stop());
const dir = mkdtempSync(join(tmpdir(), 'cosictl-daily-'));

function run(
  args: string[], input?: string, config = served.cosictlConfig, env: NodeJS.ProcessEnv = {},
): Promise<Ran> {
  return runProgram(cosictl, ['--config', config, ...args], { env, ...(input !== undefined ? { input } : {}) });
}
const file = (name: string, text: string) => {
  const p = join(dir, name);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
  return p;
};
const motd = (id: string, text: string, labels = '') =>
  `metadata: {type: motd, id: ${id}${labels ? `, labels: {${labels}}` : ''}}\nspec: {text: ${text}}\n`;

t.test('a flag a command does not take is refused, naming who takes it', async (t) => {
  for (const [args, re] of [
    [['get', 'motd', '-f', 'x.yaml'],
      /--filename is not a flag of get \(apply, apply-config, validate, delete, diff take it\)/],
    [['apply', '-w', '-o', 'json', '-f', 'x.yaml'], /--watch is not a flag of apply \(get takes it\)/],
    [['version', '--wipe'], /--wipe is not a flag of version \(install takes it\)/],
    [['delete', 'motd', 'x', '--sort-by', '.x'], /--sort-by is not a flag of delete \(get takes it\)/],
  ] as const) {
    const r = await run([...args]);
    t.equal(r.code, 2, args.join(' '));
    t.match(r.err, re);
  }
  const v = await run(['version', '-o', 'table']);
  t.same([v.code, v.err], [2, 'cosictl: --output: version prints json or yaml, got "table"\n']);
});

t.test('help: every command has its own, however it is asked for', async (t) => {
  for (const c of ['get', 'apply', 'apply-config', 'validate', 'delete', 'install', 'upgrade', 'rollback',
    'api-resources', 'version', 'config', 'gen', 'describe', 'explain', 'diff', 'edit', 'completion', 'health',
    'logs', 'dmesg', 'support', 'reboot', 'shutdown', 'restart', 'uptime', 'memory', 'ps', 'mounts',
    'netstat']) {
    const viaHelp = await run(['help', c]);
    t.equal(viaHelp.code, 0, `help ${c}`);
    t.match(viaHelp.out, new RegExp(`^usage: cosictl ${c}`), `help ${c} is ${c}'s`);
    t.equal((await run([c, '--help'])).out, viaHelp.out, `${c} --help says the same`);
  }
  const top = await run(['--help']);
  t.match(top.out, /COSICTL_ENDPOINT/, 'the environment variables are documented');
  t.match(top.out, /COSICTL_CONFIG/);
  t.equal((await run(['help', 'nosuch'])).code, 2);
});

t.test('kubectl\'s habits: bare cosictl is help; did you mean; TYPE/ID; TYPE,TYPE; -o yml', async (t) => {
  const bare = await run([]);
  t.same([bare.code, bare.err], [0, ''], 'bare: help, exit 0');
  t.match(bare.out, /^usage: cosictl /);
  const typo = await run(['gte', 'motd']);
  t.same([typo.code, typo.err], [2, 'cosictl: unknown command "gte" (did you mean get?)\n']);
  t.match((await run(['frobnicate'])).err, /unknown command "frobnicate" \(commands: get, /, 'nothing near: the list');
  const type = await run(['get', 'motds-']);
  t.equal(type.code, 4);
  t.match(type.err, /^cosictl: unknown resource type "motds-" \(did you mean motd\?\) \(see `cosictl api-resources`\)/);
  t.match((await run(['get', 'lnkspec'])).err, /did you mean linkspec\?/);
  await run(['apply', '-f', '-'], [motd('hb-1', 'one'), motd('hb-2', 'two')].join('---\n'));
  const one = await run(['get', 'motd/hb-1', 'motd/hb-2', '-o', 'name']);
  t.same([one.code, one.out], [0, 'motd/hb-1\nmotd/hb-2\n'], 'TYPE/ID, several');
  const yml = await run(['get', 'motd/hb-1', '-o', 'yml']);
  t.equal(yml.code, 0, yml.err);
  t.match(yml.out, /^metadata:\n[^]*  id: hb-1\n[^]*spec:\n  text: one\n/, '-o yml is yaml');
  const both = await run(['get', 'motd,cmdline']);
  t.equal(both.code, 0, both.err);
  t.match(both.out, /^NAMESPACE +TYPE +ID +VERSION +TEXT.*\n(config +Motd +.*\n)+\nNAMESPACE +TYPE +ID +VERSION +.*\n/,
    `a table per type, a blank line between:\n${both.out}`);
  t.match(both.out, /\nruntime +KernelCmdline +current /);
  const list = JSON.parse((await run(['get', 'motd/hb-2', 'motd/hb-1', '-o', 'json'])).out) as
    { kind: string; items: { metadata: { id: string } }[] };
  t.same(list.items.map((i) => i.metadata.id), ['hb-2', 'hb-1'], 'json: one list, in the order asked');
  for (const [args, re] of [
    [['get', 'motd/hb-1', 'hb-2'], /"hb-2": after TYPE\/ID, every argument is TYPE\/ID/],
    [['get', 'motd,linkspec', 'hb-1'], /ids name resources of one type; give TYPE\/ID for each instead/],
    [['get', 'motd,linkspec', '-w'], /get --watch follows one type/],
  ] as const) {
    const r = await run([...args]);
    t.same([r.code, r.err.match(re) !== null], [2, true], `${args.join(' ')}: ${r.err.trim()}`);
  }
  await run(['delete', 'motd', 'hb-1', 'hb-2']);
});

t.test('kubectl\'s habits: -A, get all, --field-selector, delete --all, describe TYPE, explain T.F, wait, events',
  async (t) => {
    await run(['apply', '-f', '-'], [motd('kh-1', 'one', 'tier: a'), motd('kh-2', 'two'), motd('kh-3', 'two')]
      .join('---\n'));
    const everywhere = await run(['get', 'motd', '-A', '-o', 'name']);
    t.equal(everywhere.code, 0, everywhere.err);
    t.match(everywhere.out, /^motd\/kh-1\nmotd\/kh-2\nmotd\/kh-3\n/m, '-A: every namespace');
    const all = await run(['get', 'all']);
    t.equal(all.code, 0, all.err);
    t.match(all.out, /^NAMESPACE +TYPE +ID +VERSION +TEXT[^]*\nconfig +Motd +kh-1 /m, 'get all: the motds among them');
    t.match(all.out, /\nruntime +KernelCmdline +current /, 'and the machine\'s own');
    t.notMatch(all.out, /ResourceDefinition/, 'not the meta namespace\'s');
    const fields = await run(['get', 'motd', '--field-selector', 'spec.text=two', '-o', 'name']);
    t.equal(fields.out, 'motd/kh-2\nmotd/kh-3\n', '--field-selector: by a field');
    const not = await run(['get', 'motd', '--field-selector', 'spec.text!=two,metadata.id!=kh-3', '-o', 'name']);
    t.match(not.out, /^motd\/kh-1$/m, '!= and commas');
    t.notMatch(not.out, /kh-[23]/);
    const bad = await run(['get', 'motd', '--field-selector', 'spec.text']);
    t.same([bad.code, bad.err], [2, 'cosictl: --field-selector: "spec.text" is not PATH=VALUE or PATH!=VALUE '
      + '(e.g. spec.link=eth0)\n']);
    const described = await run(['describe', 'motd']);
    t.equal(described.code, 0, described.err);
    t.equal(described.out.match(/^Kind: +Motd$/gm)?.length, (await run(['get', 'motd', '-o', 'name'])).out
      .split('\n').filter(Boolean).length, 'describe TYPE: every one of them');
    t.match((await run(['describe', 'motd/kh-2'])).out, /^ID: +kh-2$/m, 'describe TYPE/ID');
    const field = await run(['explain', 'motd.text']);
    t.equal(field.code, 0, field.err);
    t.match(field.out, /^FIELD: +text <string/m, 'explain TYPE.FIELD');
    const waiting = run(['wait', 'motd/kh-4', '--for', 'jsonpath={.spec.text}=four', '--timeout', '20s']);
    await new Promise((r) => setTimeout(r, 1000));
    await run(['apply', '-f', '-'], motd('kh-4', 'four'));
    const waited = await waiting;
    t.same([waited.code, waited.out, waited.err], [0, 'motd/kh-4 {.spec.text}=four\n', ''], 'wait --for=jsonpath');
    const late = await run(['wait', 'motd/kh-4', '--for=jsonpath={.spec.text}=five', '--timeout', '1s']);
    t.same([late.code, late.err], [1, 'cosictl: wait motd/kh-4: not {.spec.text}=five within 1 s: '
      + '{.spec.text} is "four"\n'], 'not within the time: what it last saw');
    const deletion = run(['wait', 'motd', 'kh-4', '--for=delete']);
    await new Promise((r) => setTimeout(r, 1000));
    await run(['delete', 'motd', 'kh-4']);
    t.same([(await deletion).code, (await deletion).out], [0, 'motd/kh-4 deleted\n'], 'wait --for=delete');
    // A resource the role may not read is not one that is gone: the refusal is the answer.
    const hidden = await run(['--context', 'operator', 'wait', 'apicertificateauthority/api', '--for=delete']);
    t.equal(hidden.code, 1, `refused, not "deleted": ${hidden.err.trim()}`);
    t.match(hidden.err, /sensitive: admins only/);
    const ready = await run(['wait', 'bootstatus/boot', '--for=condition=ready']);
    t.same([ready.code, ready.out], [0, 'bootstatus/boot condition ready\n'], 'condition=: a spec field that is true');
    const events = await run(['events', '--since', '1h']);
    t.equal(events.code, 0, events.err);
    t.match(events.out, /^Timeline \(the last change of each resource; the machine keeps no event history\):\n/);
    t.match(events.out, /\n {2}\S+Z +\S+ ago +Motd config\/kh-3 created\n/, 'events: across types and namespaces');
    const gone = await run(['delete', 'motd', '--all']);
    t.equal(gone.code, 0, gone.err);
    t.match(gone.out, /^motd\/kh-1 deleted$/m, 'delete TYPE --all');
    t.equal((await run(['get', 'motd', '-o', 'name'])).out, '', 'none left');
    const idsToo = await run(['delete', 'motd', 'x', '--all']);
    t.same([idsToo.code, idsToo.err], [2, 'cosictl: delete TYPE --all: give the TYPE alone, no ids\n']);
  });

t.test('version: readable, --client needs no machine, --short, -o json; --version', async (t) => {
  const v = await run(['version']);
  t.equal(v.code, 0, v.err);
  t.match(v.out, /^Client:\n {2}cosictl \d+\.\d+\.\d+ \(commit \w+\)\n/);
  t.match(v.out, /\nServer:\n {2}appliance \d+\.\d+\.\d+ \(commit \w+\)\n/);
  t.match(v.out, /kernel .*, node v\d+/);
  t.match((await run(['version', '--short'])).out, /^client: \d+\.\d+\.\d+\nserver: \d+\.\d+\.\d+\n$/);
  const gone = await run(['version', '--client', '-e', '127.0.0.1:1', '-o', 'json']);
  t.equal(gone.code, 0, 'no machine asked');
  t.match(JSON.parse(gone.out), { clientVersion: { version: /^\d/, commit: /\w/ } });
  t.notOk('serverVersion' in (JSON.parse(gone.out) as object));
  const both = JSON.parse((await run(['version', '-o', 'json'])).out) as Record<string, { version: string }>;
  t.equal(both.serverVersion?.version, both.clientVersion?.version);
  const flagOnly = await run(['--version']);
  t.match(flagOnly.out, /^cosictl \d+\.\d+\.\d+ \(commit \w+\)\n$/);
  const unreachable = await run(['version', '-e', '127.0.0.1:1']);
  t.equal(unreachable.code, 5, 'the machine cannot be reached: the client version still shows');
  t.match(unreachable.out, /^Client:\n {2}cosictl/);
});

t.test('label selectors: k>N and k>=N match only resources that have the label', async (t) => {
  await run(['apply', '-f', '-'], [motd('sel-5', 'a', 'prio: "5"'), motd('sel-20', 'b', 'prio: "20"'),
    motd('sel-none', 'c')].join('---\n'));
  const ids = async (sel: string) => (await run(['get', 'motd', '-l', sel, '--id-regexp', '^sel-', '-o', 'name',
    '--sort-by', '{.metadata.id}'])).out.trim().split('\n').filter(Boolean);
  t.same(await ids('prio>10'), ['motd/sel-20']);
  t.same(await ids('prio>=5'), ['motd/sel-20', 'motd/sel-5']);
  t.same(await ids('prio<10'), ['motd/sel-5']);
  t.same(await ids('!prio'), ['motd/sel-none']);
});

t.test('delete: each reported, none stops the others; --ignore-not-found; -f; controller output', async (t) => {
  await run(['apply', '-f', '-'], [motd('d-a', 'a'), motd('d-b', 'b')].join('---\n'));
  const r = await run(['delete', 'motd', 'd-a', 'd-nosuch', 'd-b']);
  t.equal(r.code, 4, 'the worst outcome: not found');
  t.equal(r.out, 'motd/d-a deleted\nmotd/d-b deleted\n', 'the ones after the missing one went too');
  t.equal(r.err, 'cosictl: delete motd/d-nosuch: no Motd "d-nosuch" in namespace config\n');
  t.notMatch(r.err, /get:|undefined/);
  const quiet = await run(['delete', 'motd', 'd-nosuch', '--ignore-not-found']);
  t.same([quiet.code, quiet.out, quiet.err], [0, '', '']);
  const owned = await run(['delete', 'addressspecstatuses', 'nope', 'x']);
  t.equal(owned.code, 4);
  const banner = await run(['delete', 'issue', 'banner']);
  t.equal(banner.code, 1);
  t.match(banner.err, /delete issue\/banner: a controller \("issue-status"\) writes it, so it cannot be deleted/);
  const docs = file('del/set.yaml', [motd('f-1', 'one'), motd('f-2', 'two')].join('---\n'));
  t.equal((await run(['apply', '-f', docs])).code, 0);
  const byFile = await run(['delete', '-f', join(dir, 'del')]);
  t.same([byFile.code, byFile.out], [0, 'motd/f-1 deleted\nmotd/f-2 deleted\n'], 'a directory given to -f');
  t.equal((await run(['delete', '-f', docs])).code, 4, 'deleted already');
  t.equal((await run(['delete', '-f', docs, '--ignore-not-found'])).code, 0);
  t.equal((await run(['delete', 'motd', 'x', '-f', docs])).code, 2, 'ids and -f do not mix');
});

t.test('layers: users declare the config layer, shown as such; another layer is its writer\'s', async (t) => {
  const own = await run(['apply', '-f', '-'], 'metadata: {type: linkspec, id: lx0}\nspec: {mtu: 1400}\n');
  t.equal(own.code, 0, own.err);
  t.match((await run(['get', 'linkspec', 'lx0'])).out, /\blx0\s+\d+\s+1400\s+config\n/, 'LAYER says config');
  const dhcp = await run(['apply', '-f', '-'], 'metadata: {type: linkspec, id: lx1}\nspec: {mtu: 1400, layer: dhcp}\n');
  t.equal(dhcp.code, 3, 'refused, nothing applied');
  t.match(dhcp.err, /document 1 \(LinkSpec lx1\): spec\.layer: "dhcp" belongs to the DHCP client; a config declares/);
  const client = served.client();
  t.teardown(() => client.close());
  const e = await client.create(newResource({ namespace: 'network', type: LINK_SPEC_TYPE, id: 'lx2' },
    { mtu: 1400, layer: 'platform' })).then(() => undefined, (x: Error) => x);
  t.match(e, { code: 'permission-denied', message: /the platform layer belongs to the platform plugin/ },
    'a State write of another layer is refused too');
  t.equal((await run(['delete', 'linkspec', 'lx0'])).code, 0);
});

t.test('delete: a finalizer still held past the deadline is named, and the resource goes once it is let go',
  async (t) => {
    await run(['apply', '-f', '-'], motd('held', 'h'));
    const client = served.client();
    t.teardown(() => client.close());
    const cur = await client.get({ namespace: 'config', type: 'Motds.config.appliance.dev', id: 'held' });
    await client.update({ ...cur, metadata: { ...cur.metadata, finalizers: ['test-holder'] } });
    const r = await run(['--timeout', '1s', 'delete', 'motd', 'held']);
    t.equal(r.code, 1, 'refused, not unreachable: the machine answered');
    t.match(r.err,
      /^cosictl: delete motd\/held: not released within 1 s: tearing down, finalizers still held by test-holder/);
    const now = await client.get(cur.metadata);
    t.equal(now.metadata.phase, 'tearingDown');
    await client.update({ ...now, metadata: { ...now.metadata, finalizers: [] } });
    let code = 0;
    for (let i = 0; i < 50 && code !== 4; i++) {
      code = (await run(['get', 'motd', 'held'])).code;
      if (code !== 4) await new Promise((x) => setTimeout(x, 100));
    }
    t.equal(code, 4, 'the machine finished the delete by itself once the finalizer went');
  });

t.test('edit: applied on save; a refused edit reopens with its problems; nothing typed is lost', async (t) => {
  /** An editor: a shell script given the file, as $EDITOR would be. */
  const editor = (name: string, script: string) => {
    const p = file(`editors/${name}`, `#!/bin/sh\nset -e\n${script}\n`);
    chmodSync(p, 0o755);
    return { COSICTL_EDITOR: p };
  };
  /** cosictl edit ARGS with an editor that runs `script`. */
  const edit = (args: string[], name: string, script: string) =>
    run(['edit', ...args], undefined, undefined, editor(name, script));
  const text = async () =>
    (YAML.parse((await run(['get', 'motd', 'ed', '-o', 'yaml'])).out) as { spec: { text: string } }).spec.text;
  await run(['apply', '-f', '-'], motd('ed', 'one'));
  const saved = await edit(['motd', 'ed'], 'two', `sed -i 's/text: one/text: two/' "$1"`);
  t.same([saved.code, saved.out.split('\n')[0]], [0, 'motd/ed configured'], saved.err);
  t.equal(await text(), 'two');
  const same = await edit(['motd', 'ed'], 'none', 'true');
  t.same([same.code, same.err], [0, 'edit cancelled: no changes; nothing applied\n']);
  const emptied = await edit(['motd', 'ed'], 'empty', ': > "$1"');
  t.same([emptied.code, emptied.err], [0, 'edit cancelled: the file was emptied; nothing applied\n']);
  const seen = join(dir, 'editors/seen.yaml');
  const fixes = await edit(['motd', 'ed'], 'fixes', `cp "$1" ${seen}
if grep -q 'refused this edit' "$1"; then sed -i 's/text: .*/text: three/' "$1"
else sed -i 's/text: .*/text: 5/' "$1"; fi`);
  t.equal(fixes.code, 0, fixes.err);
  t.match(fixes.err, /edit of motd\/ed: document 1 \(Motd ed\): spec\.text: must be a string/, 
    'the problem was shown');
  const second = readFileSync(seen, 'utf8');
  t.match(second, /^# The machine refused this edit:\n#[^]*spec\.text: must be a string/m,
    'the second opening shows the problem');
  t.match(second, /^ {2}text: 5$/m, '... above the edit as it was');
  t.equal(await text(), 'three');
  const stuck = await edit(['motd', 'ed'], 'bad', `sed -i 's/text: .*/text: 5/' "$1"`);
  t.equal(stuck.code, 3, 'refused, then left as it was');
  const kept = /It is kept in (\S+)/.exec(stuck.err)?.[1];
  t.ok(kept && readFileSync(kept, 'utf8').includes('text: 5'), `the edit is kept: ${stuck.err}`);
  t.equal(await text(), 'three', 'nothing applied');
  const renamed = await edit(['motd', 'ed'], 'rename', `sed -i 's/id: ed$/id: other/' "$1"`);
  t.equal(renamed.code, 3);
  t.match(renamed.err, /metadata\.id was "ed", the edit makes it "other": edit changes a resource in place/);
  const theirs = file('editors/theirs.yaml', motd('ed', 'theirs'));
  const raced = await edit(['motd', 'ed'], 'race', `${cosictl} --config ${served.cosictlConfig} apply -f ${theirs}
sed -i 's/text: three/text: mine/' "$1"`);
  t.equal(raced.code, 1, raced.err);
  t.match(raced.err, /changed on the machine while it was being edited \(version \d+ -> \d+\); nothing applied/);
  t.equal(await text(), 'theirs', 'the other writer\'s change stands');
  // A line starting with # inside a block scalar is text, not a comment: changing it is an edit.
  await run(['apply', '-f', '-'], 'metadata: {type: motd, id: ed}\nspec:\n  text: |\n    # Title\n    body\n');
  const titled = await edit(['motd', 'ed'], 'title', `sed -i 's/    # Title/    # New title/' "$1"`);
  t.equal(titled.code, 0, titled.err);
  t.equal(await text(), '# New title\nbody\n', 'a # line of the text was edited and applied');
  const failing = await run(['edit', 'motd', 'ed'], undefined, undefined, { COSICTL_EDITOR: 'false' });
  t.equal(failing.code, 1);
  t.match(failing.err, /the editor "false" exited with status 1; nothing applied \(the edit is kept in \S+\)/);
  const missing = await edit(['motd', 'nosuch'], 'none', 'true');
  t.same([missing.code, missing.err], [4, 'cosictl: edit motd/nosuch: no Motd "nosuch" in namespace config\n']);
  const owned = await edit(['issue', 'banner'], 'none', 'true');
  t.equal(owned.code, 1);
  t.match(owned.err, /edit issue\/banner: a controller \("issue-status"\) writes it, so it cannot be edited/);
});

t.test('round trips and inputs: get -o yaml applies back; directories, URLs, empty input', async (t) => {
  await run(['apply', '-f', '-'], [motd('rt-1', 'one', 'team: a'), motd('rt-2', 'two')].join('---\n'));
  const yaml = (await run(['get', 'motd', '--id-regexp', '^rt-', '-o', 'yaml'])).out;
  t.match(yaml, /version: 1\n/, 'read-only metadata is in what get prints');
  const back = await run(['apply', '-f', '-'], yaml);
  t.equal(back.code, 0, back.err);
  t.equal(back.out.split('\n').filter((l) => /^motd/.test(l)).join('\n'), 'motd/rt-1 unchanged\nmotd/rt-2 unchanged');
  const edited = await run(['apply', '-f', '-'], yaml.replace('text: one', 'text: uno'));
  t.match(edited.out, /motd\/rt-1 configured/);
  const settable = await run(['apply', '-f', '-'], 'metadata: {type: motd, id: rt-3, color: red}\nspec: {text: x}\n');
  t.match(settable.err, /metadata\.color: not settable/, 'other unknown metadata is still refused');

  file('tree/b/2.yaml', motd('tree-2', 'two'));
  file('tree/a.yml', motd('tree-1', 'one'));
  file('tree/notes.txt', 'not a document');
  const tree = await run(['apply', '-f', join(dir, 'tree')]);
  t.equal(tree.code, 0, tree.err);
  t.match(tree.out, /^motd\/tree-1 created\nmotd\/tree-2 created\n/, 'recursively, in name order, YAML files only');
  t.equal((await run(['apply', '-f', file('empty/none.yaml', '# nothing\n---\n')])).code, 3, 'empty input');
  t.match((await run(['apply', '-f', '/dev/null'])).err, /\/dev\/null: no documents in it; nothing applied/);

  let asked = '';
  const http = createServer((req, res) => {
    asked = req.url ?? '';
    if (req.url === '/motd.yaml') res.end(motd('url-1', 'fetched'));
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  t.teardown(() => http.close());
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const url = await run(['apply', '-f', `${base}/motd.yaml`]);
  t.equal(url.code, 0, url.err);
  t.match(url.out, /motd\/url-1 created/);
  t.equal(asked, '/motd.yaml');
  const missing = await run(['apply', '-f', `${base}/nope.yaml`]);
  t.same([missing.code, missing.err], [2, `cosictl: cannot fetch ${base}/nope.yaml: HTTP 404 Not Found\n`]);
});

t.test('several files: validated together, each problem named by its own file and document', async (t) => {
  const one = file('multi/one.yaml', [motd('m-1', 'one'), motd('m-2', 'two')].join('---\n'));
  const two = file('multi/two.yaml', [motd('m-3', 'three'), motd('m-1', 'again')].join('---\n'));
  const dup = await run(['apply', '-f', one, '-f', two]);
  t.equal(dup.code, 3);
  t.match(dup.err, `${two}: document 2 (Motd m-1): duplicate of document 1 of ${one}`);
  t.equal((await run(['get', 'motd', 'm-3'])).code, 4, 'nothing was written');
  const bad = file('multi/bad.yaml', `${motd('m-4', '12')}---\n# the second\n${motd('m-5', 'fine')}`);
  const r = await run(['apply', '-f', one, '-f', bad]);
  t.equal(r.code, 3);
  t.match(r.err, `${bad}: document 1 (Motd m-4): spec.text: must be a string, got 12 (quote it: "12")`);
});

t.test('broken YAML: the line, counted in the file, and a caret under the place', async (t) => {
  const text = `${motd('y-1', 'fine')}---\n# two\nmetadata: {type: motd, id: y-2}\nspec: {text: [a, b\n`;
  const expected = [
    /document 2: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a \]/,
    /\(line 7, column 1\)\n {2}6 \| spec: \{text: \[a, b\n {2}7 \| \n {4}\| \^\n/,
  ];
  const single = await run(['apply', '-f', file('broken.yaml', text)]);
  t.equal(single.code, 3);
  for (const re of expected) t.match(single.err, re, 'sent whole: the machine says where');
  const joined = await run(['apply', '-f', file('ok.yaml', motd('y-0', 'x')), '-f', join(dir, 'broken.yaml')]);
  t.equal(joined.code, 3);
  for (const re of expected) t.match(joined.err, re, 'joined: cosictl says where, in the file\'s own lines');
  t.match(joined.err, `${join(dir, 'broken.yaml')}: document 2`);
  const offline = await run(['validate', '-f', join(dir, 'broken.yaml')]);
  for (const re of expected) t.match(offline.err, re, 'validate says the same');
});

t.test('contexts: view (secrets redacted), get-contexts, use-context, set-context, delete-context', async (t) => {
  const cfg = join(dir, 'contexts.yaml');
  copyFileSync(served.cosictlConfig, cfg);
  const c = (args: string[], input?: string) => run(args, input, cfg);
  const view = await c(['config', 'view']);
  t.equal(view.code, 0, view.err);
  t.match(view.out, /key: "<private key, \d+ bytes: --raw shows it>"/);
  t.notMatch(view.out, /BEGIN/, 'no PEM without --raw');
  t.match((await c(['config', 'view', '--raw'])).out, /BEGIN CERTIFICATE/);
  t.match((await c(['config', 'get-contexts'])).out, /^CURRENT\s+NAME\s+ENDPOINT\s+NAMESPACE\s+AUTH\n\*\s+admin\s/);
  t.equal((await c(['config', 'current-context'])).out, 'admin\n');
  t.equal((await c(['config', 'use-context', 'reader'])).out, 'switched to context "reader"\n');
  const denied = await c(['apply', '-f', '-'], motd('ctx-denied', 'x'));
  t.equal(denied.code, 1, 'the reader context is used');
  t.match(denied.err, /reader/);
  t.equal((await c(['config', 'current-context'])).out, 'reader\n');
  t.equal((await c(['config', 'use-context', 'nosuch'])).code, 4);
  t.equal((await c(['config', 'set-context', 'reader', '--namespace', 'network'])).out, 'context "reader" modified\n');
  const ns = await c(['get', 'linkstatuses', '-o', 'name']);
  t.match(ns.out, /linkstatus\/lo/, 'the context\'s namespace');
  t.equal((await c(['config', 'set-context', 'lab', '--endpoint', '192.0.2.10'])).out, 'context "lab" created\n');
  const file = YAML.parse(readFileSync(cfg, 'utf8')) as { contexts: Record<string, { endpoint: string }> };
  t.equal(file.contexts.lab?.endpoint, '192.0.2.10:50000');
  t.match((await c(['config', 'delete-context', 'reader'])).out, /deleted context "reader"; "admin" is current now/);
  writeFileSync(cfg, readFileSync(cfg, 'utf8').replace(/^contexts:/m, 'contxts: {}\ncontexts:'));
  t.match((await c(['config', 'get-contexts'])).err, /unknown key "contxts" ignored/, 'a misspelt top-level key');
});

t.test('explain and describe: fields with their rules and docs; one resource with its way', async (t) => {
  const ex = await run(['explain', 'linkspec']);
  t.equal(ex.code, 0, ex.err);
  t.match(ex.out, /^KIND: {7}LinkSpec\nTYPE: {7}LinkSpecs\.net\.appliance\.dev\nNAMESPACE: {2}network\n/);
  t.match(ex.out, /MESSAGE: {4}appliance\.net\.v1alpha1\.LinkSpecSpec/);
  t.match(ex.out, /\n {2}mtu <integer, 68 to 65535>\n {6}The MTU/, 'a field: its type, its rules in words, its doc');
  t.match(ex.out, /layer <string, one of default, cmdline, platform, dhcp, config>/);
  const field = await run(['explain', 'routespec', 'gateway']);
  t.match(field.out, /FIELD: {6}gateway <string, an IP address>\n\n {2}Next hop/);
  const nofield = await run(['explain', 'kernelparamspec', 'nosuch']);
  t.same([nofield.code, nofield.err], [4, 'cosictl: KernelParamSpec: spec has no field "nosuch" (fields: value, '
    + 'layer, key)\n']);

  t.equal((await run(['apply', '-f', '-'], 'metadata: {type: linkspec, id: dsc0, labels: {lab: x}}\n'
    + 'spec: {mtu: 1300}\n')).code, 0);
  let d: Ran | undefined;
  for (let i = 0; i < 40; i++) {
    d = await run(['describe', 'linkspec', 'dsc0']);
    if (/Related: LinkSpecStatus/.test(d.out)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(d!.code, 0, d!.err);
  t.match(d!.out, /^Kind: {8}LinkSpec\n/);
  t.match(d!.out, /\nOwner: {7}\(declared by a user or a config\)\n/);
  t.match(d!.out, /\nLabels: {6}lab=x\n/);
  t.match(d!.out, /\nFinalizers: {2}link-merge\n/, 'who holds its teardown');
  t.match(d!.out, /\nSpec:\n {2}mtu: 1300\n/);
  t.match(d!.out, new RegExp(/Related: MergedLinkSpec dsc0 \(version \d+, written by link-merge\):\n {2}mtu: 1300\n/
    .source + /[^]*Related: LinkSpecStatus dsc0 \(version \d+, written by link-spec\):/.source), 'in order');
  t.match(d!.out, new RegExp(/\nTimeline \(the last change of each resource above; the machine keeps no/.source
    + / event history\):\n {2}\S+Z {2}\S+ ago +LinkSpec dsc0 created\n[^]*LinkSpecStatus dsc0 (created|changed)/
    .source),
  'a timeline, oldest first, from what was declared to what the machine did');
  t.equal((await run(['describe', 'linkspec', 'nosuch'])).code, 4);
  t.equal((await run(['describe'])).code, 2, 'no type: usage');
  // A second spec for the same link (as DHCP's dhcp/eth0 is beside a user's eth0): the merged spec names both.
  t.equal((await run(['apply', '-f', '-'], 'metadata: {type: linkspec, id: dsc0-b}\n'
    + 'spec: {link: dsc0, up: true}\n')).code, 0);
  let m: Ran | undefined;
  for (let i = 0; i < 40; i++) {
    m = await run(['describe', 'mergedlinkspec', 'dsc0']);
    if (/Related: LinkSpec dsc0-b/.test(m.out)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.match(m!.out, new RegExp(/Related: LinkSpec dsc0 \(layer config, version \d+\):\n {2}mtu: 1300\n/.source
    + /[^]*Related: LinkSpec dsc0-b \(layer config, version \d+\):\n {2}up: true/.source
    + /[^]*Related: LinkSpecStatus dsc0 /.source), 'a merged spec: its layers\' specs, winner first, then its status');
  const layered = await run(['describe', 'linkspec', 'dsc0-b']);
  t.match(layered.out, new RegExp(/Related: LinkSpec dsc0 \(layer config, /.source
    + /[^]*Related: MergedLinkSpec dsc0 [^]*Related: LinkSpecStatus dsc0 /.source),
  'one spec: the others for its link, the merged spec it feeds and the status, by the merged id');
  await run(['delete', 'linkspec', 'dsc0', 'dsc0-b']);
});

t.test('diff: what apply would change, per resource; nothing written', async (t) => {
  await run(['apply', '-f', '-'], [motd('df-1', 'one', 'team: a'), motd('df-2', 'same')].join('---\n'));
  const f = file('diff.yaml', [motd('df-1', 'uno', 'team: b'), motd('df-2', 'same'), motd('df-3', 'new')]
    .join('---\n'));
  const d = await run(['diff', '-f', f]);
  t.equal(d.code, 1, `differences: exit 1, as kubectl diff (${d.err})`);
  t.match(d.out, /^--- motd\/df-1 \(the machine, version 1\)\n\+\+\+ motd\/df-1 \(.*diff\.yaml, document 1\)\n/);
  t.match(d.out, /\n labels:\n-  team: a\n\+  team: b\n spec:\n-  text: one\n\+  text: uno\n/);
  t.match(d.out, /--- motd\/df-3 \(the machine, none\)\n\+\+\+ motd\/df-3 \(.*document 3\)\n\+spec:\n\+  text: new\n/);
  t.notMatch(d.out, /df-2/, 'an unchanged resource is not shown');
  t.match((await run(['get', 'motd', 'df-1', '-o', 'yaml'])).out, /text: one/, 'nothing written');
  t.equal((await run(['diff', '-f', f, '--exit-code'])).code, 1, '--exit-code, kept for scripts: the same');
  const stdin = await run(['diff', '-f', '-'], motd('df-1', 'uno'));
  t.match(stdin.out, /\+\+\+ motd\/df-1 \(stdin, document 1\)\n[^]*\+  text: uno\n/, 'stdin, read once, is diffed too');
  const same = await run(['diff', '-f', file('same.yaml', motd('df-2', 'same')), '--exit-code']);
  t.same([same.code, same.out, same.err], [0, '', 'no differences\n']);
  t.equal((await run(['diff', '-f', file('bad-diff.yaml', motd('df-9', '12'))])).code, 3, 'invalid input');
  await run(['delete', 'motd', 'df-1', 'df-2']);
});

t.test('health: each check; exit 1 naming the failing one; --wait follows it until it holds', async (t) => {
  const healthy = await run(['health']);
  t.same([healthy.code, healthy.err], [0, ''], healthy.err);
  t.match(healthy.out, /^ok {4}api: serving\nok {4}plugins: \d+ running\n/);
  // An address for a link this host does not have: the engine on a host configures nothing, so it never holds.
  t.equal((await run(['apply', '-f', '-'], 'metadata: {type: addressspec, id: hz}\n'
    + 'spec: {link: hz0, address: 192.0.2.9/24}\n')).code, 0);
  let sick: Ran | undefined;
  for (let i = 0; i < 40 && sick?.code !== 1; i++) {
    sick = await run(['health']);
    await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(sick!.code, 1);
  t.match(sick!.out, /^FAIL {2}addresses: hz0 lacks 192\.0\.2\.9\/24$/m);
  t.match(sick!.err, /^not healthy: addresses: hz0 lacks 192\.0\.2\.9\/24\n$/);
  const late = await run(['health', '--wait', '1s']);
  t.equal(late.code, 1);
  t.match(late.err, /waiting: addresses: hz0 lacks[^]*not healthy within 1s/);
  const waiting = run(['health', '--wait', '60s']);
  await new Promise((r) => setTimeout(r, 1000));
  t.equal((await run(['delete', 'addressspec', 'hz'])).code, 0);
  const healed = await waiting;
  t.equal(healed.code, 0, 'healthy once the address is no longer wanted');
  t.match(healed.err, /^waiting: addresses: hz0 lacks/);
  t.match(healed.out, /^ok {4}addresses: /m);
});

/** A port on 127.0.0.1 where nothing listens (a server took it and let it go). */
async function freePort(): Promise<number> {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

t.test('health --wait waits for an API that does not answer yet, saying why', async (t) => {
  const port = await freePort();
  const waiting = run(['-e', `127.0.0.1:${port}`, 'health', '--wait', '60s']);
  await new Promise((r) => setTimeout(r, 3000));
  // The machine's API appears at the address (as a VM's forward reaches the guest once its network is up).
  const forward = createNetServer((c) => {
    const to = netConnect(served.port, '127.0.0.1');
    c.pipe(to).pipe(c);
    c.on('error', () => to.destroy());
    to.on('error', () => c.destroy());
  }).listen(port, '127.0.0.1');
  t.teardown(() => forward.close());
  const r = await waiting;
  t.equal(r.code, 0, r.err);
  t.match(r.err,
    /^waiting: the API does not answer yet: cannot reach the COSI API: cannot reach 127\.0\.0\.1:\d+: refused/);
  t.match(r.out, /^ok {4}api: serving$/m);
  const late = await run(['-e', `127.0.0.1:${await freePort()}`, 'health', '--wait', '2s']);
  t.equal(late.code, 5, 'still unreachable at the end of --wait: exit 5');
  t.match(late.err, /waiting: the API does not answer yet[^]*cosictl: cannot reach the COSI API/);
});

t.test('reboot --wait says what it sees and ends when the machine is gone; watches say why they end', async (t) => {
  // A host engine stops at a power request and does not come back: as a VM whose QEMU ends at a reboot.
  const other = await startServe(a.exe);
  t.teardown(() => other.stop());
  const watch = run(['get', 'motd', '-w'], undefined, other.cosictlConfig);
  const follow = run(['logs', 'engine', '-f'], undefined, other.cosictlConfig);
  await new Promise((r) => setTimeout(r, 2000));
  const started = Date.now();
  const r = await run(['reboot', '--wait', '2m', '--id', 'gone'], undefined, other.cosictlConfig);
  t.equal(r.code, 5, r.err);
  t.match(r.err, /^reboot: asked \(PowerRequest "gone"\)/);
  t.match(r.err, /^reboot: down: nothing listens at its address \(\d+ s\)$/m, 'what it saw');
  t.match(r.err, /cosictl: the machine is gone: 127\.0\.0\.1:\d+ has refused connections for 20 s since it went down/);
  t.ok(Date.now() - started < 60_000, 'well before --wait\'s 2 minutes');
  const why = 'the machine is rebooting: API power request "gone"';
  const w = await watch;
  t.equal(w.code, 5);
  t.equal(w.err, `cosictl: the watch ended: ${why}\n`, 'the watch says why it ended');
  const l = await follow;
  t.equal(l.code, 5);
  t.equal(l.err, `cosictl: the machine stopped sending engine's lines: ${why}\n`, 'and so does logs -f');
});

t.test('usage errors say what to do, and never "undefined"', async (t) => {
  for (const [args, code, re] of [
    [['get'], 2, /^cosictl: get: name a resource type \(see `cosictl api-resources`\)\n$/],
    [['get', 'nosuch'], 4, /^cosictl: unknown resource type "nosuch"/],
    [['get', 'motd', 'nosuch'], 4, /^cosictl: no Motd "nosuch" in namespace config\n$/],
    [['get', 'motd', '--id-regexp', '('], 2, /^cosictl: --id-regexp: "\(" is not a regular expression: Unterminated/],
    [['get', 'motd', '-l', 'a in (x'], 2, /bad label selector term "a in \(x"/],
    [['get', 'motd', '-o', 'bogus'], 2, /--output: expected table, wide, yaml \(or yml\), json, name or jsonpath=/],
    [['describe'], 2, /describe: give a TYPE and an ID/],
    [['edit', 'motd'], 2, /edit: give one TYPE and one ID/],
    [['explain', 'motd', 'a.b'], 4, /Motd: spec has no field "a" \(fields: text, priority\)/],
    [['apply', '--try', 'soon', '-f', 'x'], 2, /--try: "soon" is not a duration \(e\.g\. 60s, 5m, 1h\)/],
    [['gen'], 2, /^cosictl: gen: give what to make: secrets or config\n$/],
    [['gen', 'config', '--role', 'x'], 2, /--role shapes the cosictl context .* give --secrets too/],
    [['install', '--size', 'big'], 2, /^cosictl: --size: size "big": want an optional comparison/],
    [['upgrade', '--image', '/no/such.tar'], 2, /^cosictl: cannot read \/no\/such\.tar: ENOENT/],
    [['apply', '-f', '/no/such.yaml'], 2, /^cosictl: cannot read \/no\/such\.yaml: ENOENT/],
    [['config', 'use-context'], 2, /config use-context: name a context/],
    [['completion', 'tcsh'], 2, /name one shell: bash, zsh, fish \("tcsh" is not one\)/],
    [['--timeout', 'soon', 'get', 'motd'], 2, /--timeout: "soon" is not a duration/],
  ] as const) {
    const r = await run([...args]);
    t.equal(r.code, code, args.join(' '));
    t.match(r.err, re, args.join(' '));
    t.notMatch(r.out + r.err, /undefined|NaN|\[object Object\]/, `${args.join(' ')}: no undefined`);
  }
});

t.test('unreachable: at once, saying which of refused, DNS or no socket, with a hint', async (t) => {
  const started = Date.now();
  const refused = await run(['-e', '127.0.0.1:1', 'get', 'motd']);
  t.equal(refused.code, 5);
  t.match(refused.err, /refused: nothing listens there \(is the machine up\?/);
  const dns = await run(['-e', 'no-such-host.invalid', 'get', 'motd']);
  t.equal(dns.code, 5);
  t.match(dns.err, /DNS: no address for "no-such-host.invalid"/);
  const sock = await run(['-e', join(dir, 'no.sock'), 'get', 'motd']);
  t.match(sock.err, /no socket at .*no\.sock/);
  t.ok(Date.now() - started < 10_000, 'none waited for a timeout');
});

t.test('completion: bash, fish and zsh complete commands, types, aliases and ids from the machine', async (t) => {
  await run(['apply', '-f', '-'], [motd('tab-alpha', 'a'), motd('tab-beta', 'b')].join('---\n'));
  const env = { ...process.env, PATH: `${a.dir}:${process.env.PATH}` };
  const shell = (cmd: string, args: string[]) => new Promise<string>((resolve, reject) => {
    execFile(cmd, args, { env, timeout: 30_000 },
      (e, out, err) => (e ? reject(new Error(`${cmd}: ${err}`)) : resolve(out)));
  });
  const cfg = served.cosictlConfig;
  const bash = (words: string[]) => shell('bash', ['-c', `source <(cosictl completion bash)
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _cosictl
printf '%s\\n' "\${COMPREPLY[@]}"`]);
  t.same((await bash(['cosictl', 'ed'])).split('\n'), ['edit', ''], 'bash: a command');
  t.same((await bash(['cosictl', '--config', cfg, 'get', 'mot'])).split('\n'), ['motds', 'motd', ''],
    'bash: a type by its plural and its alias');
  t.same((await bash(['cosictl', '--config', cfg, 'get', 'motd', 'tab-'])).split('\n'), ['tab-alpha', 'tab-beta', ''],
    'bash: ids from the machine');
  const fish = await shell('fish', ['-c', `cosictl completion fish | source
complete -C 'cosictl --config ${cfg} describe mot'; complete -C 'cosictl --config ${cfg} delete motd tab-alpha tab'`]);
  t.equal(fish, 'motd\tMotds.config.appliance.dev\nmotds\tMotds.config.appliance.dev\ntab-beta\n',
    'fish: types with their full names; ids not given already');
  // Completion as a person meets it: typed into an interactive shell in tmux (zsh completes only there).
  const interactive = async (name: string, argv: string[], setup: string) => {
    const term = await Tmux.start(`cosictl-${name}`, argv, { columns: 200, rows: 20 });
    t.teardown(() => term.kill());
    const keys = (...k: string[]) => term.keys(...k);
    const screen = (re: RegExp) => term.waitFor(re);
    await keys(`export PATH='${a.dir}':$PATH; ${setup}`, 'Enter', `PS1='ready> '`, 'Enter');
    await screen(/^ready> $/m);
    /** Types `line`, presses Tab, and answers the screen once the line became `want`. */
    return async (line: string, want: string) => {
      await keys('C-u', line, 'Tab');
      const re = new RegExp(`${want.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm');
      return { re, text: await screen(re) };
    };
  };
  const tabFile = file('tab/tabfile-unique.yaml', motd('tab-file', 'x'));
  const zsh = await interactive('zsh', ['zsh', '-f'],
    'autoload -Uz compinit && compinit -u -D && source <(cosictl completion zsh)');
  const bashTab = await interactive('bash', ['bash', '--norc', '--noprofile'], 'source <(cosictl completion bash)');
  for (const [shellName, tab] of [['zsh', zsh], ['bash', bashTab]] as const) {
    let r = await tab(`cosictl --config ${cfg} get motd tab-b`, 'get motd tab-beta');
    t.match(r.text, r.re, `${shellName}: an id from the machine, completed in place`);
    r = await tab(`cosictl --config ${cfg} explain linkspec mt`, 'explain linkspec mtu');
    t.match(r.text, r.re, `${shellName}: a field of the type`);
    r = await tab(`cosictl apply -f ${tabFile.replace(/unique\.yaml$/, 'u')}`, `apply -f ${tabFile}`);
    t.match(r.text, r.re, `${shellName}: -f completes a file name`);
  }
  t.equal(await shell('fish', ['-c', `cosictl completion fish | source
complete -C 'cosictl apply -f ${tabFile.replace(/unique\.yaml$/, 'u')}'`]), `${tabFile}\n`,
  'fish: -f completes a file name');
});

t.test('a Tab never hangs: a machine that does not answer gets 2 s, then nothing is offered', async (t) => {
  const silent = createNetServer(() => undefined).listen(0, '127.0.0.1');
  await once(silent, 'listening');
  t.teardown(() => silent.close());
  const started = Date.now();
  const endpoint = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const r = await new Promise<Ran>((resolve) => execFile(cosictl, ['__complete', '-i', '-e', endpoint, 'get', ''],
    (e, out, err) => resolve({ code: e ? 1 : 0, out, err })));
  t.same([r.code, r.out], [0, ':done\n']);
  t.match(r.err, /completion: (types: |no answer within 2000 ms)/, 'why is on stderr, which the scripts drop');
  t.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
});

t.test('a watch ends, exit 5, when the machine stops answering', async (t) => {
  const w = spawn(cosictl, ['--config', served.cosictlConfig, 'get', 'motd', '--watch']);
  let out = '';
  let err = '';
  w.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  w.stderr.on('data', (d: Buffer) => {
    err += d;
  });
  const exited = new Promise<number | null>((r) => w.on('exit', (c) => r(c)));
  for (let i = 0; i < 200 && !/Motd/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
  t.match(out, /Motd/, 'watching');
  // The engine frozen: its sockets stay open, nothing answers (a machine whose network went away).
  served.process.kill('SIGSTOP');
  try {
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 40_000))]);
    t.equal(code, 5);
    t.match(err, /the watch ended: .*no answer to a keepalive ping/);
  } finally {
    served.process.kill('SIGCONT');
    w.kill();
  }
  t.equal((await run(['get', 'versions', '-o', 'name'])).code, 0, 'the engine answers again');
});
