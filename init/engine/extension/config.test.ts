// Extensions in the machine config, against the built engine on this host (`serve`, which runs no
// extensions): a saved config keeps the types of the extensions it declares, so the next boot validates
// and applies its resources of those types before any image is fetched; a config declaring an extension
// whose types cannot be learned is refused, saying why, when it also holds resources of those types.
// qemu/extension.test.ts runs the same in a booted machine, where the types are learned from the image.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts } from '../../../qemu/artifacts.ts';
import { startServe, testSecrets } from '../serve-harness.ts';
import { CONFIG_FILE, formatSavedConfig } from '../../../machinery/config/saved-config.ts';
import { apiCaDocument } from '../../../machinery/pki/secrets.ts';
import { runProgram } from '../../../scripts/lib/run-program.ts';
import { DEFINITION_TYPE, META_NAMESPACE, type DefinitionInput } from '../../../cosi/meta/definition.ts';
import { META_CODECS } from '../../../cosi/remote/meta-codecs.ts';

const a = artifacts();
const dir = mkdtempSync(join(tmpdir(), 'extension-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const stateDir = join(dir, 'state');
mkdirSync(stateDir);
const SHA = 'c'.repeat(64);
const welcomes: DefinitionInput = { type: 'Welcomes.welcome.example.org', defaultNamespace: 'welcome',
  schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } };
writeFileSync(join(stateDir, CONFIG_FILE), formatSavedConfig({
  source: 'api', savedAt: '2026-11-24T00:00:00Z', extensionTypes: { [SHA]: [welcomes] },
  text: `---\n${apiCaDocument(testSecrets())}---\nmetadata: {type: extensions, id: welcome}\n`
    + `spec: {source: "http://10.0.2.100/welcome.squashfs", sha256: ${SHA}}\n`
    + '---\nmetadata: {namespace: welcome, type: Welcomes.welcome.example.org, id: saved}\nspec: {name: saved}\n',
}));
const served = await startServe(a.exe, ['--state-dir', stateDir], { config: false });
t.teardown(() => served.stop());
const cosictl = (args: string[], input?: string) => runProgram(join(a.dir, 'cosictl'),
  ['--config', served.cosictlConfig, ...args], input !== undefined ? { input } : {});

t.test('a saved config brings its extensions\' types: its resources of them apply at boot', async (t) => {
  t.match((await cosictl(['get', 'configstatus', 'machine', '-o', 'json'])).out, /"state": "applied"/);
  const got = await cosictl(['get', 'Welcomes.welcome.example.org', 'saved', '-o', 'json']);
  t.equal(got.code, 0, got.err);
  t.match(got.out, /"name": "saved"/);
  const s = served.client('admin', { codecs: META_CODECS });
  t.teardown(() => s.close());
  const def = await s.get({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: 'welcomes.welcome.example.org' });
  t.equal(def.metadata.owner, 'extension/welcome', 'registered as the extension\'s, not a user\'s');
  // This engine runs none: the extension itself says so, its types and resources are kept all the same.
  const st = await cosictl(['get', 'extensionstatus', 'welcome', '-o', 'json']);
  t.match(st.out, /"phase": "failed"/);
  t.match(st.out, /this engine runs on a host \(serve\): it runs no extensions/);
});

t.test('an extension whose types cannot be learned: resources of unknown types are refused, saying why', async (t) => {
  const r = await cosictl(['apply', '-f', '-'], 'metadata: {type: extensions, id: later}\n'
    + `spec: {source: "http://10.0.2.100/later.squashfs", sha256: ${'d'.repeat(64)}}\n---\n`
    + 'metadata: {namespace: later, type: Laters.later.example.org, id: one}\nspec: {x: 1}\n');
  t.equal(r.code, 3, r.err);
  t.match(r.err, /Laters\.later\.example\.org/);
  t.match(r.err, /extension later's types are unknown: this engine runs on a host \(serve\): it runs no extensions/);
  t.match((await cosictl(['get', 'extensions', 'later'])).code, 4, 'nothing of it applied');
});
