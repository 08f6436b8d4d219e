// appliance.yaml read whole in a project directory made here; then each way of getting it wrong, refused with its
// field and reason, every problem at once.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import YAML from 'yaml';
import { generateSecrets, secretsToYaml } from '../../machinery/pki/secrets.ts';
import { loadDefinition } from './definition.ts';
import { APPLIANCE_SCHEMA_FILE } from './editor-schemas.ts';

const project = mkdtempSync(join(tmpdir(), 'appliance-definition-'));
t.teardown(() => rmSync(project, { recursive: true, force: true }));
mkdirSync(join(project, 'hello/bin'), { recursive: true });
writeFileSync(join(project, 'hello/bin/hello'), '#!/bin/sh\n');
writeFileSync(join(project, 'base.yaml'), 'metadata: {type: hostnamespec, id: box}\nspec: {hostname: box1}\n');
writeFileSync(join(project, 'secrets.yaml'),
  'metadata: {type: files, id: token}\nspec: {path: /run/token, content: x}\n');
writeFileSync(join(project, 'upgrade.pem'), 'not read here\n');

const GOOD = {
  apiVersion: 'appliance.dev/v1alpha1', kind: 'Appliance', name: 'hello-box', version: '1.2.0',
  extensions: [{ name: 'hello', dir: 'hello', executable: '/bin/hello', args: ['--loud'], env: { GREETING: 'hi' } }],
  config: [
    { path: 'base.yaml' },
    { inline: 'metadata: {type: sysctl, id: net.ipv4.ip_forward}\nspec: {value: "1"}\n' },
  ],
  secrets: 'secrets.yaml',
  kernel: { args: ['console=ttyS0'], modules: ['e1000e'] },
  signing: { key: 'upgrade.pem' },
  formats: ['raw', 'qcow2'],
};

const write = (name: string, v: unknown) => {
  const file = join(project, name);
  writeFileSync(file, typeof v === 'string' ? v : YAML.stringify(v));
  return file;
};

t.test('a good definition, read whole', async (t) => {
  const r = await loadDefinition(write('appliance.yaml', GOOD));
  t.same(r.problems, []);
  const d = r.definition!;
  t.equal(d.name, 'hello-box');
  t.same(d.extensions.map((e) => [e.name, e.source]), [['hello', { dir: join(project, 'hello') }]],
    'paths resolved against the definition\'s directory');
  t.same(d.extensions[0]!.manifest, {
    name: 'hello', version: '1.2.0', description: '', executable: '/bin/hello', args: ['--loud'],
    env: { GREETING: 'hi' }, types: [], outputs: [], capabilities: [], ready: { kind: 'plugin' }, workingDir: '/',
    volumes: [], critical: false, after: [], devices: [],
  }, 'the dir extension\'s manifest, its version the appliance\'s');
  t.same(d.config.parts, [{ name: 'config[0] (base.yaml)', documents: 1 }, { name: 'config[1] (inline)', documents: 1 },
    { name: 'secrets (secrets.yaml)', documents: 1 }], 'the secrets file is the config\'s last part');
  t.same(d.secrets, { file: join(project, 'secrets.yaml'), apiSecrets: false });
  t.same(d.run, { forward: [], memoryMiB: 512 }, 'appliance run: no forwards, 512 MiB');
  t.same(d.kernel, { args: ['console=ttyS0'], modules: ['e1000e'] });
  t.same(d.formats, ['raw', 'qcow2']);
  const least = await loadDefinition(write('least.yaml', {
    apiVersion: 'appliance.dev/v1alpha1', kind: 'Appliance', name: 'x', version: '1' }));
  t.same(least.definition?.formats, ['raw'], 'the least: a raw disk of ours, nothing added');
});

t.test('refused, every problem with its field', async (t) => {
  const problems = async (v: unknown) => (await loadDefinition(write('bad.yaml', v))).problems;
  t.same(await problems({ ...GOOD, apiVersion: 'v1', colour: 'blue', formats: ['floppy'] }), [
    'apiVersion: must be one of appliance.dev/v1alpha1, got "v1"',
    'formats[0]: must be one of raw, qcow2, iso, aws, gce, pxe, upgrade, upgrade-self-contained, got "floppy"',
    'colour: unknown field (known: apiVersion, kind, name, version, extensions, config, secrets, registryCA, kernel, '
      + 'signing, updates, formats, run)',
  ]);
  t.same(await problems({ ...GOOD, extensions: [
    { name: 'hello', dir: 'hello', executable: '/bin/hello' },
    { name: 'hello', dir: 'nowhere', executable: 'bin/x' },
    { name: 'network', oci: 'hello', dir: 'hello', executable: '/x' },
    { name: 'pre', squashfs: 'base.yaml', executable: '/x' },
    { name: 'typed', dir: 'hello', executable: '/x',
      types: [{ type: 'Links.net.appliance.dev', defaultNamespace: 'net' }] },
    { name: 'tagged', oci: 'oci://registry.example/team/web:latest' },
  ], secrets: 'missing-secrets.yaml', signing: { key: 'keys/none.pem' }, registryCA: 'no-ca.pem' }), [
    'extensions[1].name: "hello" is extensions[0]\'s name too',
    'extensions[1].dir: nowhere: no such file or directory',
    'extensions[1].executable "bin/x": must be an absolute path inside the extension (e.g. /usr/bin/python3)',
    'extensions[2].name: "network" is a built-in plugin\'s name',
    'extensions[2]: want one of dir, oci or squashfs, not dir and oci',
    'extensions[3]: executable: a prebuilt image carries its own manifest',
    `extensions[3].squashfs: ${join(project, 'base.yaml')}: no /manifest.yaml read from it (not a squashfs image, or `
      + `none in it): FATAL ERROR: Can't find a valid SQUASHFS superblock on ${join(project, 'base.yaml')}`,
    'extensions[4].types[0].type "Links.net.appliance.dev": the cosi.dev and appliance.dev groups are the machine\'s',
    'extensions[5].oci: oci://registry.example/team/web:latest: not by digest (a tag may point at another image '
      + 'tomorrow): want oci://HOST[:PORT]/REPOSITORY@sha256:<64 hex digits>',
    'secrets: missing-secrets.yaml: no such file or directory',
    'signing.key: keys/none.pem: no such file or directory',
    'registryCA: no-ca.pem: no such file or directory',
  ]);
});

t.test('the config: checked as the machine checks it, and no secret written inline', async (t) => {
  const r = await loadDefinition(write('bad.yaml', { ...GOOD, config: [
    { path: 'base.yaml' },
    { inline: 'metadata: {type: hostnamespec, id: box2}\nspec: {hostname: "not a name"}\n' },
    { inline: 'metadata: {type: files, id: key}\nspec: {path: /run/key, content: secret}\n' },
    { path: 'base.yaml', inline: 'x: 1' },
  ] }));
  t.same(r.problems, ['config[3]: want one of path or inline']);
  const r2 = await loadDefinition(write('bad2.yaml', { ...GOOD, config: [
    { inline: 'metadata: {type: hostnamespec, id: box2}\nspec: {hostname: "not a name"}\n' },
  ] }));
  t.same(r2.problems, ['config[0] (inline): document 1 (HostnameSpec box2): spec.hostname: must be a host name, '
    + 'got "not a name"'], 'in the machine\'s own words, with the part it is in');
  const { secrets: _, ...noSecrets } = GOOD;
  const r3 = await loadDefinition(write('bad3.yaml', { ...noSecrets, config: [
    { path: 'secrets.yaml' },
    { inline: 'metadata: {type: files, id: key}\nspec: {path: /run/key, content: secret}\n' },
  ] }));
  t.same(r3.problems, ['config[1] (inline): document 1 (FileSpec key): a secret written inline; put it in a file of '
    + 'its own and name it in secrets: or config: path'], 'by path it is taken; inline it is not');
  writeFileSync(join(project, 'bad-secrets.yaml'),
    'metadata: {type: hostnamespec, id: box3}\nspec: {hostname: "a b"}\n');
  const r4 = await loadDefinition(write('bad4.yaml', { ...GOOD, secrets: 'bad-secrets.yaml' }));
  t.same(r4.problems, ['secrets (bad-secrets.yaml): document 1 (HostnameSpec box3): spec.hostname: must be a host '
    + 'name, got "a b"'], 'the secrets file is checked as config too');
  const r5 = await loadDefinition(write('bad5.yaml', { ...GOOD, config: [{ inline:
    'metadata: {type: extensions, id: hello}\nspec: {source: "http://10.0.2.2/hello.squashfs", sha256: "'
      + `${'a'.repeat(64)}"}\n` }] }));
  t.same(r5.problems, ['config[0] (inline): document 1 (Extension hello): "hello" is an extension of this '
    + 'appliance (extensions:); the image declares it'], 'an ExtensionSpec named like a baked extension');
});

t.test('a secrets file of cosictl gen secrets: the machine gets its CA; run\'s forwards', async (t) => {
  writeFileSync(join(project, 'api-secrets.yaml'), secretsToYaml(generateSecrets()));
  const r = await loadDefinition(write('api.yaml', { ...GOOD, secrets: 'api-secrets.yaml',
    run: { forward: ['8080:80', '2222:22'], memory: 384 } }));
  t.same(r.problems, []);
  t.same(r.definition!.secrets, { file: join(project, 'api-secrets.yaml'), apiSecrets: true });
  t.match(r.definition!.config.text,
    /type: ApiCertificateAuthorities\.security\.appliance\.dev\n {2}id: api\nspec:\n {2}certificate: /);
  t.notMatch(r.definition!.config.text, /clients/, 'no client key in the image');
  t.same(r.definition!.run, { forward: [{ hostPort: 8080, guestPort: 80 }, { hostPort: 2222, guestPort: 22 }],
    memoryMiB: 384 });
  writeFileSync(join(project, 'broken-secrets.yaml'), 'version: v1alpha1\nca: {certificate: x, key: y}\n');
  t.match((await loadDefinition(write('api2.yaml', { ...GOOD, secrets: 'broken-secrets.yaml',
    run: { forward: ['8080', '99999:80'] } }))).problems, [
    /^run\.forward\[0\]: must be HOSTPORT:GUESTPORT, e\.g\. 8080:8080, got "8080"$/,
  ]);
  t.match((await loadDefinition(write('api3.yaml', { ...GOOD, secrets: 'broken-secrets.yaml',
    run: { forward: ['99999:80'] } }))).problems, [
    /^secrets: broken-secrets\.yaml: ca: /, /^run\.forward\[0\]: "99999:80": ports are 1-65535$/,
  ]);
});

t.test('what is no definition at all', async (t) => {
  t.match((await loadDefinition(join(project, 'none.yaml'))).problems, [/none\.yaml: no such file/]);
  t.match((await loadDefinition(write('list.yaml', '- a\n'))).problems, [/want a mapping with apiVersion/]);
  t.match((await loadDefinition(write('broken.yaml', 'name: [\n'))).problems, [/not YAML/]);
});

t.test('the JSON Schema editors get (docs/schemas): takes the good definition and refuses a bad one',
  async (t) => {
    const check = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(APPLIANCE_SCHEMA_FILE, 'utf8')));
    t.ok(check(GOOD), 'the good definition');
    t.notOk(check({ ...GOOD, colour: 'blue' }), 'an unknown field');
    t.notOk(check({ ...GOOD, extensions: [{ name: 'Hello', dir: 'x' }] }), 'an extension name against its pattern');
  });

t.test('updates: the machine boots with an UpdatePolicy pinning the repository\'s root', async (t) => {
  const root = { signed: { _type: 'root', version: 1 }, signatures: [] };
  writeFileSync(join(project, 'root.json'), JSON.stringify(root));
  const r = await loadDefinition(write('updates.yaml', { ...GOOD,
    updates: { root: 'root.json', url: 'https://updates.example.com/', window: '02:00-04:00' } }));
  t.same(r.problems, []);
  const d = r.definition!;
  t.same(d.config.parts.at(-1), { name: 'updates', documents: 1 });
  const doc = YAML.parseAllDocuments(d.config.text).at(-1)!.toJS() as { metadata: unknown; spec: { root: string } };
  t.same(doc.metadata, { type: 'UpdatePolicies.runtime.appliance.dev', id: 'appliance' });
  t.match(doc.spec, { urls: ['https://updates.example.com/'], channel: 'stable', window: '02:00-04:00' });
  t.same(JSON.parse(doc.spec.root), root, 'the root file\'s own text, pinned');
  t.same(d.updates, { url: 'https://updates.example.com/', channel: 'stable' });
  writeFileSync(join(project, 'not-root.json'), JSON.stringify({ signed: { _type: 'timestamp' } }));
  const bad = await loadDefinition(write('updates-bad.yaml', { ...GOOD,
    updates: { root: 'not-root.json', url: 'ftp://x', channel: 'Stable' } }));
  t.same(bad.problems, ['updates.url: must be an http:// or https:// URL, got "ftp://x"',
    'updates.channel: must be lower-case letters, digits and -, got "Stable"']);
  const bad2 = await loadDefinition(write('updates-bad2.yaml', { ...GOOD,
    updates: { root: 'not-root.json', url: 'https://u.example/' } }));
  t.match(bad2.problems, [/^updates\.root: .*not-root\.json: not a TUF root \(its signed\._type is "timestamp"\)$/]);
});
