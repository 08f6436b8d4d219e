// The machine config end to end: the built cosictl against the built engine (`serve
// --state-dir`), over a real socket. Validated whole, merged or replaced (prune),
// persisted atomically and loaded back by the next engine, tried and reverted or
// confirmed, refused whole with the document and field, checked offline alike.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { artifacts } from '../../../qemu/artifacts.ts';
import { startServe, type Served } from '../serve-harness.ts';
import { until } from '../../../cosi/conformance/converge.ts';
import { RemoteState } from '../../../cosi/remote/client.ts';
import { META_CODECS } from '../../../cosi/remote/meta-codecs.ts';
import { newResource } from '../../../cosi/resource/resource.ts';
import { type ConfigStatusSpec } from '../../../machinery/model/runtime-types.ts';
import { CONFIG_FILE, formatSavedConfig, parseSavedConfig } from '../../../machinery/config/saved-config.ts';
import { CONFIG_RPC } from '../../../machinery/model/service-wire.ts';
import { BAD_CONFIGS } from '../../../machinery/config/testing/bad-configs.ts';
import { apiCaDocument } from '../../../machinery/pki/secrets.ts';
import { runProgram, type Ran } from '../../../scripts/lib/run-program.ts';
import { CONFIG_STATUS_TYPE, KERNEL_PARAM_SPEC_TYPE, MOTD_TYPE, SYSTEM_NS } from '../../../proto/gen/resource-types.ts';
import { CONFIG_STATUS_ID } from '../../../machinery/model/singleton-ids.ts';

const a = artifacts();
const cosictlExe = join(a.dir, 'cosictl');
const dir = mkdtempSync(join(tmpdir(), 'machine-config-test-'));
const stateDir = join(dir, 'state');

// No config at all: the machine starts in maintenance mode, and the first test gives it its CA as a user would.
let served: Served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
t.teardown(() => served.stop());
const api = () => served.client('admin', { codecs: META_CODECS });

function cosictl(args: string[], input?: string): Promise<Ran> {
  return runProgram(cosictlExe, ['--config', served.cosictlConfig, ...args], input !== undefined ? { input } : {});
}
const file = (name: string, text: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const motd = (id: string, text: string, extra = '') =>
  `---\nmetadata: {type: motd, id: ${id}${extra}}\nspec: {text: "${text}"}\n`;
const motds = async () => {
  const s = api();
  try {
    return Object.fromEntries((await s.list({ namespace: 'config', type: MOTD_TYPE }))
      .map((r) => [r.metadata.id, (r.spec as { text: string }).text]));
  } finally { s.close(); }
};
const configStatus = async () => {
  const s = api();
  try {
    const p = { namespace: 'runtime', type: CONFIG_STATUS_TYPE, id: CONFIG_STATUS_ID };
    return (await s.get(p)).spec as ConfigStatusSpec;
  } finally { s.close(); }
};
const saved = () => parseSavedConfig(readFileSync(join(stateDir, CONFIG_FILE), 'utf8'), 'saved');

t.test('with nothing persisted the machine waits for a config, in maintenance mode, until given its CA', async (t) => {
  const insecure = (args: string[]) => cosictl(['--insecure', ...args]);
  t.match((await insecure(['get', 'configstatus', '-o', 'yaml'])).out, /state: maintenance/);
  t.match((await insecure(['get', 'apicert', '-o', 'yaml'])).out,
    /mode: maintenance\n\s+fingerprint: ([0-9A-F]{2}:){31}/);
  const refused = await insecure(['get', 'motd']);
  t.equal(refused.code, 1);
  t.match(refused.err, /maintenance mode .*: Motds\.config\.appliance\.dev cannot be read yet/);
  const verified = await cosictl(['get', 'versions']);
  t.equal(verified.code, 6, 'a client that verifies the machine refuses its certificate (the TLS kind, not 5)');
  t.match(verified.err, /the machine's certificate is self-signed, .* --insecure.*\(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
  const given = await insecure(['apply-config', '-f', file('ca.yaml', apiCaDocument(served.secrets))]);
  t.equal(given.code, 0, given.err);
  t.match(given.out, /apicertificateauthority\/api created/);
  const st = await until(async () => (await configStatus().catch(() => undefined))?.state, 'applied');
  t.equal(st, 'applied', 'mutual TLS with the CA it was given');
  t.match(await configStatus(), { persistedTo: join(stateDir, CONFIG_FILE), resources: 1 });
  const after = await insecure(['get', 'versions']);
  t.equal(after.code, 6, 'without a client certificate the machine refuses the client');
  t.match(after.err, /this machine requires a client certificate .*, and this client sent none/);
});

t.test('apply merges, persists atomically, and says what it did', async (t) => {
  const r = await cosictl(['apply', '-f', file('a.yaml', motd('one', 'first') + motd('two', 'second'))]);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /motd\/one created\nmotd\/two created\npersisted to .*machine-config\.yaml/);
  t.same(await motds(), { one: 'first', two: 'second' });
  t.match(saved(), { source: 'api', text: /id: one[\s\S]*id: two/ });
  t.same(readdirSync(stateDir), [CONFIG_FILE], 'no temporary file left beside it');
  const again = await cosictl(['apply', '-f', file('b.yaml', motd('two', 'changed'))]);
  t.match(again.out, /motd\/two configured/);
  t.same(await motds(), { one: 'first', two: 'changed' }, 'merge leaves the others');
  t.match(await configStatus(), { state: 'applied', source: 'api', resources: 3 }, 'the CA and the two motds');
});

t.test('a bad config is refused whole with document, field and reason; nothing changes', async (t) => {
  const before = readFileSync(join(stateDir, CONFIG_FILE), 'utf8');
  const bad = motd('three', 'fine') + '---\nmetadata: {type: motd, id: four}\nspec: {text: 42, colour: red}\n'
    + '---\nmetadata: {type: Nonsense, id: x}\nspec: {}\n' + motd('three', 'again');
  const r = await cosictl(['apply-config', '-f', file('bad.yaml', bad)]);
  t.equal(r.code, 3);
  t.match(r.err, /refused, nothing applied/);
  t.match(r.err, /bad\.yaml: document 2 \(Motd four\): spec\.text: .*string/);
  t.match(r.err, /bad\.yaml: document 2 \(Motd four\): spec\.colour/);
  t.match(r.err, /bad\.yaml: document 3 .*unknown resource type "Nonsense"/);
  t.match(r.err, /bad\.yaml: document 4 \(Motd three\): duplicate of document 1/);
  t.same(await motds(), { one: 'first', two: 'changed' }, 'nothing applied');
  t.equal(readFileSync(join(stateDir, CONFIG_FILE), 'utf8'), before, 'nothing persisted');
  const st = await configStatus();
  t.equal(st.state, 'applied', 'the machine keeps its config');
  t.equal(st.refusedSource, 'api');
  t.ok(st.refusedProblems?.some((p) => /document 3/.test(p)), 'ConfigStatus lists the problems');
  const v = await cosictl(['validate', '-f', join(dir, 'bad.yaml')]);
  t.equal(v.code, 3);
  t.equal(v.err.trim(), r.err.split('\n').slice(1).join('\n').trim(), 'cosictl validate says the same, offline');
});

t.test('hostile inputs are refused quickly', async (t) => {
  const deep = file('deep.yaml', `metadata: {type: motd, id: x}\nspec: ${'['.repeat(100_000)}`);
  const big = file('big.yaml', `metadata: {type: motd, id: x}\nspec: {text: "${'x'.repeat(10 << 20)}"}\n`);
  for (const f of [deep, big]) {
    const t0 = Date.now();
    const r = await cosictl(['apply-config', '-f', f]);
    t.equal(r.code, 3, r.err);
    t.match(r.err, /nested deeper|larger than/);
    t.ok(Date.now() - t0 < 5000, 'answered at once');
  }
  // The machine itself, past cosictl's own check: over the request limit, and over the config limit.
  const s = api();
  t.teardown(() => s.close());
  const send = (bytes: Buffer) => s.unary(CONFIG_RPC.applyConfig.path, CONFIG_RPC.applyConfig.request.encode({
    config: bytes, mode: 'replace', dryRun: false, trySeconds: 0, sourceName: 'raw',
  }));
  await t.rejects(send(readFileSync(big)), /exceeds the limit/, 'a 10 MB request is refused by size');
  await t.rejects(send(Buffer.alloc(2 << 20, 0x20)), /raw: config is 2\.0 MiB, larger than the 1\.0 MiB limit/);
  await t.rejects(send(readFileSync(deep)), /line 2: nested deeper/);
  t.same(await motds(), { one: 'first', two: 'changed' });
});

t.test('the bad-config corpus, sent past cosictl: each refused whole with its reason; nothing changes', async (t) => {
  const s = api();
  t.teardown(() => s.close());
  const before = await configStatus();
  for (const bad of BAD_CONFIGS) {
    const sent = s.unary(CONFIG_RPC.applyConfig.path, CONFIG_RPC.applyConfig.request.encode({
      config: Buffer.from(bad.text), mode: 'replace', dryRun: false, trySeconds: 0, sourceName: bad.name,
    }));
    await t.rejects(sent, bad.expect, bad.name);
  }
  t.same(await motds(), { one: 'first', two: 'changed' }, 'nothing applied');
  t.match(await configStatus(), { state: 'applied', appliedAt: before.appliedAt }, 'the config in force is kept');
});

t.test('a KernelParamSpec whose id stands in for a key that leaves /proc/sys is refused when written', async (t) => {
  const s = api();
  t.teardown(() => s.close());
  const param = (id: string, spec: Record<string, unknown>) =>
    newResource({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id }, spec);
  for (const id of ['kernel/../../../etc/x', 'net/./ipv4/ip_forward', 'kernel/..']) {
    const why = /metadata\.id \(the key when spec\.key is unset\): .*without \. or \.\. parts/;
    await t.rejects(s.create(param(id, { value: '1' })), { code: 'invalid-argument', message: why }, `id ${id}`);
  }
  await t.rejects(s.create(param('fine', { value: '1', key: 'kernel/../x' })), /spec\.key: .*without \. or \.\. parts/,
    'the key itself');
  // The id is checked only where it stands in: a spec with its own key keeps any id. (Keys no kernel has: serve's
  // system plugin writes the host's /proc/sys.)
  const own = await s.create(param('any-name', { value: '1', key: 'appliance/no_such_key' }));
  t.equal(own.metadata.id, 'any-name');
  await s.teardownAndDestroy(own.metadata); // the merge controller may already hold a finalizer on it
  const dotted = await s.create(param('appliance.no_such_key', { value: '1' }));
  t.equal(dotted.metadata.id, 'appliance.no_such_key', 'a dotted id is a key');
  await s.teardownAndDestroy(dotted.metadata);
});

t.test('dry run shows the plan and changes nothing; gzip is accepted', async (t) => {
  const next = gzipSync(motd('one', 'first') + motd('three', 'third'));
  const r = await cosictl(['apply-config', '--dry-run', '-f', file('next.yaml.gz', next)]);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /motd\/one unchanged \(dry run\)/);
  t.match(r.out, /motd\/three created \(dry run\)/);
  t.match(r.out, /motd\/two deleted \(dry run\)/);
  t.match(r.out, /dry run: nothing changed/);
  t.same(await motds(), { one: 'first', two: 'changed' });
});

t.test('apply-config replaces: what it does not name is deleted, what controllers own is untouched', async (t) => {
  const r = await cosictl(['apply-config', '-f', file('next.yaml', motd('one', 'first') + motd('three', 'third'))]);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /motd\/two deleted/);
  t.same(await motds(), { one: 'first', three: 'third' });
  const s = api();
  t.teardown(() => s.close());
  t.ok(await s.get({ namespace: 'runtime', type: 'Versions.runtime.appliance.dev', id: 'appliance' }),
    'engine-owned resources stay');
  t.notMatch(saved().text, /id: two/);
});

t.test('one config can define a type and use it; changes of a reboot-only type are reported', async (t) => {
  const cfg = motd('one', 'first') + `---
metadata: {type: ResourceDefinition, namespace: meta, id: bootknobs.example.com}
spec:
  type: BootKnobs.example.com
  defaultNamespace: example
  needsReboot: true
  schema: {type: object, required: [level], properties: {level: {type: integer, minimum: 1}}}
---
metadata: {type: BootKnobs.example.com, id: k1}
spec: {level: 3}
`;
  const v = await cosictl(['validate', '-f', file('typed.yaml', cfg)]);
  t.equal(v.code, 0, v.err);
  t.match(v.out, /valid \(3 resources\)/);
  const bad = await cosictl(['validate', '-f', file('typed-bad.yaml', cfg.replace('level: 3', 'level: 0'))]);
  t.match(bad.err, /document 3 \(BootKnob k1\): spec\.level/);
  const r = await cosictl(['apply-config', '-f', join(dir, 'typed.yaml')]);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /resourcedefinition\/bootknobs\.example\.com created\n/);
  t.match(r.out, /bootknob\/k1 created \(takes effect at the next boot\)/);
  t.match(r.err, /1 change\(s\) take effect at the next boot/);
  t.match(r.out, /motd\/three deleted/);
  t.match(saved().text, /BootKnobs\.example\.com[\s\S]*id: k1/);
  const again = await cosictl(['apply-config', '-f', join(dir, 'typed.yaml')]);
  t.equal(again.code, 0, again.err);
  t.match(again.out, /resourcedefinition\/bootknobs\.example\.com unchanged\n/,
    'a definition applied again is unchanged');
  t.match(again.out, /bootknob\/k1 unchanged\n/);
});

t.test('the next engine loads the persisted config before anything else', async (t) => {
  await served.stop();
  served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
  t.same(await motds(), { one: 'first' });
  const s = api();
  t.teardown(() => s.close());
  t.ok(await s.get({ namespace: 'example', type: 'BootKnobs.example.com', id: 'k1' }),
    'the user type and its resource');
  t.match(await configStatus(), { state: 'applied', source: 'state', message: /persisted config applied/ });
});

t.test('writes through the State API (any COSI client, cosictl delete) are persisted too', async (t) => {
  const s = api();
  t.teardown(() => s.close());
  await s.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'raw' }, { text: 'from a client' }));
  await until(() => /id: raw/.test(saved().text), true);
  t.match(saved().text, /from a client/);
  const d = await cosictl(['delete', 'motd', 'raw']);
  t.equal(d.code, 0, d.err);
  await until(() => /id: raw/.test(saved().text), false);
  t.pass('the deletion is persisted');
  // A request (a rollback, which a host refuses to carry out; a PowerRequest would end serve).
  await s.create(newResource({ namespace: 'config', type: 'RollbackRequests.runtime.appliance.dev', id: 'p' },
    { reboot: false }));
  await new Promise((r) => setTimeout(r, 300));
  t.notMatch(saved().text, /RollbackRequest/, 'requests are never part of the config');
});

t.test('a write just before the machine stops is saved as it stops, not lost with its pending save', async (t) => {
  const s = api();
  await s.create(newResource({ namespace: 'config', type: MOTD_TYPE, id: 'last' }, { text: 'just in time' }));
  s.close();
  await served.stop(); // at once: the save waits 500 ms for more writes
  t.match(saved().text, /id: last[\s\S]*just in time/);
  served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
  t.match(await motds(), { last: 'just in time' }, 'and the next engine has it');
  const d = await cosictl(['delete', 'motd', 'last']);
  t.equal(d.code, 0, d.err);
  await until(() => /id: last/.test(saved().text), false);
});

t.test('a save the machine stopped in: the whole old file loads, and the status says so', async (t) => {
  await served.stop();
  // What a power cut between the temporary file's fsync and the rename leaves: the old file, and the new one beside.
  const left = join(stateDir, `.${CONFIG_FILE}.1.tmp`);
  writeFileSync(left, 'metadata: {type: motd, id: half}\n');
  served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
  t.match(await configStatus(), { state: 'applied', source: 'state', message: new RegExp(
    `persisted config applied .*; a save was under way when the machine stopped \\(\\.${CONFIG_FILE}\\.1\\.tmp `
    + 'left, now removed\\): this is the config saved before it') });
  t.notOk(readdirSync(stateDir).includes(`.${CONFIG_FILE}.1.tmp`), 'the temporary file is gone');
  t.match(await configStatus(), {
    bootProblem: /^a save was under way when the machine stopped .*; the config saved /,
  });
});

t.test('a config file cut short is not loaded as a smaller config: refused with why, the engine serves', async (t) => {
  const whole = readFileSync(join(stateDir, CONFIG_FILE), 'utf8');
  await served.stop();
  // Cut at the end of a line: what is left is valid YAML, one resource short.
  const cut = whole.slice(0, whole.lastIndexOf('\n', whole.length - 2) + 1);
  writeFileSync(join(stateDir, CONFIG_FILE), cut);
  served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
  // Its CA was in it: the machine waits in maintenance mode, where anyone may read why.
  const status = JSON.parse((await cosictl(['--insecure', 'get', 'configstatus', '-o', 'json'])).out).items[0].spec;
  t.match(status, {
    state: 'maintenance', refusedSource: 'state', bootProblem: /damaged: it holds \d+ bytes/,
    refusedProblems: [new RegExp(`damaged: it holds ${Buffer.byteLength(cut) - cut.indexOf('\n') - 1} bytes of the `
      + `${Buffer.byteLength(whole) - whole.indexOf('\n') - 1} saved at .* \\(cut short\\?`)],
  });
  t.ok(readdirSync(stateDir).includes(`${CONFIG_FILE}.damaged`), 'kept aside');
  // Put back, for the tests after this one.
  await served.stop();
  writeFileSync(join(stateDir, CONFIG_FILE), whole);
  served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
  t.match(await configStatus(), { state: 'applied', source: 'state' });
});

t.test('a saved config holding a spec of another layer (declared before that was refused) loads without it',
  async (t) => {
    const whole = readFileSync(join(stateDir, CONFIG_FILE), 'utf8');
    const before = await motds();
    await served.stop();
    const old = saved();
    const linkspec = '---\nmetadata: {namespace: network, type: LinkSpecs.net.appliance.dev, id: eth7}\n'
      + 'spec: {mtu: 1400, layer: dhcp}\n';
    writeFileSync(join(stateDir, CONFIG_FILE), formatSavedConfig({ ...old, text: old.text + linkspec }));
    served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
    t.match(await configStatus(), {
      state: 'applied', source: 'state',
      bootProblem: /^left out of the saved config: .*\(LinkSpec eth7\): the dhcp layer belongs to the DHCP client/,
    }, 'the rest applied; what was left out said');
    t.same(await motds(), before, 'nothing else lost');
    await served.stop();
    writeFileSync(join(stateDir, CONFIG_FILE), whole);
    served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
  });

t.test('a tried config is reverted exactly unless confirmed', async (t) => {
  const before = await motds();
  // Long enough for the three calls below to come while it is tried, on a loaded host (2 s was not: the try ended
  // first, and the "during" apply replaced the config).
  const r = await cosictl(['apply-config', '--try', '8s', '-f', file('try.yaml', motd('tried', 'new'))]);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /trying until .*--confirm/);
  t.same(await motds(), { tried: 'new' }, 'applied');
  t.match(await configStatus(), { state: 'trying' });
  const during = await cosictl(['apply-config', '-f', join(dir, 'try.yaml')]);
  t.equal(during.code, 1);
  t.match(during.err, /awaits confirmation/);
  await until(async () => (await configStatus()).state, 'reverted', 20_000);
  t.same(await motds(), before, 'the pruned motd is back, the tried one gone');
  const s = api();
  t.teardown(() => s.close());
  t.ok(await s.get({ namespace: 'example', type: 'BootKnobs.example.com', id: 'k1' }), 'and the user type');
  t.notMatch(saved().text, /tried/, 'a try is never persisted');

  const again = await cosictl(['apply', '--try', '30s', '-f', join(dir, 'try.yaml')]);
  t.equal(again.code, 0, again.err);
  const c = await cosictl(['apply-config', '--confirm']);
  t.equal(c.code, 0, c.err);
  t.match(c.out, /confirmed; persisted to/);
  t.match(saved().text, /id: tried/);
  t.match(await configStatus(), { state: 'applied' });
  const none = await cosictl(['apply-config', '--confirm']);
  t.equal(none.code, 1);
  t.match(none.err, /no tried config/);
});

t.test('usage errors name the flag', async (t) => {
  t.match((await cosictl(['apply', '--confirm'])).err, /--confirm is not a flag of apply/);
  t.match((await cosictl(['apply-config', '--try', 'soon', '-f', 'x'])).err, /not a duration/);
  t.match((await cosictl(['apply-config', '--dry-run', '--try', '5s', '-f', 'x'])).err, /do not go together/);
});
