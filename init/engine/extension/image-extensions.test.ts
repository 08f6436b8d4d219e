// The payload a boot slot carries, as the built engine reads it on this host (`serve --payload`, which runs no
// extensions): its extensions declared as the engine's own ExtensionSpecs (not the users' config: not saved, not a
// user's to delete), its config the first one, kept no longer than the machine has none of its own; an index that
// cannot be read is said and the machine serves all the same. qemu/appliance.test.ts boots the same from a disk.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts } from '../../../qemu/artifacts.ts';
import { startServe, testSecrets } from '../serve-harness.ts';
import { CONFIG_FILE } from '../../../machinery/config/saved-config.ts';
import { encodePayload, extensionFile } from '../../../machinery/disk/slot-payload.ts';
import { apiCaDocument } from '../../../machinery/pki/secrets.ts';
import { runProgram } from '../../../scripts/lib/run-program.ts';

const a = artifacts();
const dir = mkdtempSync(join(tmpdir(), 'image-extensions-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const SHA = 'a'.repeat(64);

function payload(name: string, motd: string, index?: string): string {
  const p = join(dir, name);
  mkdirSync(p);
  writeFileSync(join(p, 'appliance.json'), index ?? encodePayload({
    name: 'kiosk', version: '1.0.0', config: true, extensions: [{ name: 'hello', sha256: SHA, bytes: 1 }],
    modules: ['dummy'],
  }));
  writeFileSync(join(p, 'config.yaml'), `${apiCaDocument(testSecrets())}---\nmetadata: {type: motd, id: kiosk}\n`
    + `spec: {text: ${motd}}\n`);
  return p;
}

const stateDir = join(dir, 'state');
const first = payload('first', 'from the image');

t.test('declared before any config; the config the first; neither saved as the users\' own', async (t) => {
  const served = await startServe(a.exe, ['--payload', first, '--state-dir', stateDir], { config: false });
  t.teardown(() => served.stop());
  const cosictl = (...args: string[]) =>
    runProgram(join(a.dir, 'cosictl'), ['--config', served.cosictlConfig, ...args]);
  t.match(served.log(),
    `kiosk 1.0.0 from ${first}: 1 extension(s) declared (hello); kernel modules dummy; a first-boot config`);
  const module = await cosictl('get', 'kernelmodulespecs', 'image-dummy', '-o', 'json');
  t.equal(module.code, 0, module.err);
  t.match(module.out, /"owner": "engine"/, 'the module the image loads: the engine\'s');
  t.match(module.out, /"layer": "default",\s+"module": "dummy"/, 'of the default layer: a config\'s spec wins');
  const spec = await cosictl('get', 'extensions', 'hello', '-o', 'json');
  t.equal(spec.code, 0, spec.err);
  t.match(spec.out, `"source": "${join(first, extensionFile('hello'))}"`, 'its source: the file beside the kernel');
  t.match(spec.out, /"owner": "engine"/, 'the engine\'s, not a user\'s');
  const status = await cosictl('get', 'extensionstatus', 'hello', '-o', 'json');
  t.match(status.out, /this engine runs on a host \(serve\): it runs no extensions/, 'this engine runs none: said');
  t.match((await cosictl('get', 'configstatus', 'machine', '-o', 'json')).out, /"source": "image"/);
  t.match((await cosictl('get', 'motd', 'kiosk')).out, /from the image/);
  const saved = readFileSync(join(stateDir, CONFIG_FILE), 'utf8');
  t.match(saved, /type: Motds\.config\.appliance\.dev/, 'the image\'s config saved as the machine\'s first');
  t.notMatch(saved, /extension-hello\.squashfs/, 'the image\'s extension is not saved as config');
  t.notMatch(saved, /image-dummy/, 'nor its module');
  const del = await cosictl('delete', 'extensions', 'hello');
  t.not(del.code, 0, 'not a user\'s to delete');
  t.match(del.err, /hello/);
});

t.test('a machine with a config of its own keeps it: a new payload\'s config is not applied', async (t) => {
  const second = payload('second', 'from version two');
  const served = await startServe(a.exe, ['--payload', second, '--state-dir', stateDir], { config: false });
  t.teardown(() => served.stop());
  const motd = await runProgram(join(a.dir, 'cosictl'), ['--config', served.cosictlConfig, 'get', 'motd', 'kiosk']);
  t.match(motd.out, /from the image/, 'the persisted config, not the new payload\'s');
  t.match(served.log(), `from ${second}: 1 extension(s) declared (hello)`, 'its extensions are declared all the same');
});

t.test('an index that cannot be read: said, and the machine serves', async (t) => {
  const broken = payload('broken', 'x', '{"name": "kiosk"');
  const served = await startServe(a.exe, ['--payload', broken]);
  t.teardown(() => served.stop());
  t.match(served.log(), new RegExp(`the appliance's payload in ${broken}: ${broken}/appliance\\.json: not JSON: .*; `
    + 'its extensions and config are not used'));
  const got = await runProgram(join(a.dir, 'cosictl'), ['--config', served.cosictlConfig, 'get', 'extensions']);
  t.equal(got.code, 0, got.err);
  t.notMatch(got.out, /hello/);
});
