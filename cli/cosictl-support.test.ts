// cosictl support against the built engine (`appliance serve` with the test plugins): the bundle
// opens with tar, holds what its help says, and a secret planted in a sensitive resource (of a
// type a client registered) is nowhere in it, nor the CA's private key the machine was given.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import YAML from 'yaml';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import { DEFINITION_TYPE, META_NAMESPACE } from '../cosi/meta/definition.ts';
import { newResource } from '../cosi/resource/resource.ts';
import { runProgram } from '../scripts/lib/run-program.ts';

const a = artifacts();
const cosictl = join(a.dir, 'cosictl');
const served = await startServe(a.exe, ['--test-plugins']);
t.teardown(() => served.stop());
const admin = served.client();
t.teardown(() => admin.close());
const dir = mkdtempSync(join(tmpdir(), 'support-'));

const run = (args: string[], context = 'admin') =>
  runProgram(cosictl, ['--config', served.cosictlConfig, '--context', context, ...args], { binaryOut: true });

const secret = `planted-${randomUUID()}`;
await admin.create(newResource({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: 'vaults.example.com' }, {
  type: 'Vaults.example.com', defaultNamespace: 'vaults', aliases: [], printColumns: [], sensitivity: 'sensitive',
}));
await admin.create(newResource({ namespace: 'vaults', type: 'Vaults.example.com', id: 'db' },
  { password: secret, note: 'the database' }));

/** The files of the bundle, unpacked by tar itself. */
function unpack(bundle: string): Map<string, string> {
  const to = mkdtempSync(join(dir, 'x-'));
  execFileSync('tar', ['-xzf', bundle, '-C', to]);
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(p.slice(to.length + 1), readFileSync(p, 'utf8'));
    }
  };
  walk(to);
  return files;
}

t.test('the bundle holds what it says: summary, versions, every resource, every log', async (t) => {
  // The crash-looping test plugin is what the health checks name, once the others run.
  for (let i = 0; i < 200; i++) {
    const h = (await admin.get({ namespace: 'runtime', type: 'HealthStatuses.runtime.appliance.dev', id: 'machine' }))
      .spec as { checks?: { name: string; message: string }[] };
    if (/^test-crasher is backoff/.test(h.checks?.find((c) => c.name === 'plugins')?.message ?? '')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const file = join(dir, 'bundle.tar.gz');
  const r = await run(['support', '-o', file]);
  t.equal(r.code, 0, r.err);
  t.match(r.err, /^support: \d+ resources, \d+ logs -> .*bundle\.tar\.gz \(\d+ KiB\)$/m);
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by its owner only');
  const files = unpack(file);
  t.match(files.get('summary.txt'), /^support bundle of 127\.0\.0\.1:\d+, made \d{4}-/);
  t.match(files.get('summary.txt'), /redacted \(sensitive types[^\n]*Vaults\.example\.com/);
  t.match(files.get('summary.txt'), /^ {2}FAIL {2}plugins: test-crasher/m, 'the health checks');
  const versions = YAML.parse(files.get('versions.yaml')!) as { client: { version: string }; machine: unknown[] };
  t.ok(versions.client.version && versions.machine.length === 1, 'client and machine versions');
  // Every resource the API lists is in the file of its type and namespace.
  const plugins = await admin.list({ namespace: 'runtime', type: 'PluginStatuses.runtime.appliance.dev' });
  const inBundle = YAML.parseAllDocuments(files.get('resources/runtime/PluginStatuses.runtime.appliance.dev.yaml')!)
    .map((d) => (d.toJS() as { metadata: { id: string } }).metadata.id);
  t.same(inBundle.sort(), plugins.map((p) => p.metadata.id).sort());
  t.ok(files.has('resources/meta/ResourceDefinitions.meta.cosi.dev.yaml'));
  const vault = YAML.parse(files.get('resources/vaults/Vaults.example.com.yaml')!) as
    { metadata: { id: string }; spec: unknown };
  t.same([vault.metadata.id, vault.spec], ['db', 'REDACTED'], 'a sensitive resource: there, its spec redacted');
  for (const s of ['engine', 'kernel', 'network', 'test-crasher']) t.ok(files.has(`logs/${s}.log`), `logs/${s}.log`);
  t.match(files.get('logs/test-crasher.log'), /exiting with status 3/);
});

t.test('no secret anywhere in the bundle: neither the planted one nor the CA key', async (t) => {
  const file = join(dir, 'secret-search.tar.gz');
  t.equal((await run(['support', '-o', file])).code, 0);
  const raw = gunzipSync(readFileSync(file)).toString('latin1');
  t.notOk(raw.includes(secret), 'the planted password');
  const keyBody = served.secrets.ca.key.split('\n').find((l) => l.length > 40)!;
  t.notOk(raw.includes(keyBody), 'the CA private key');
  t.ok(raw.includes('Vaults.example.com'), 'while the bundle is not empty of the type');
});

t.test('-o - writes to standard output; a reader\'s bundle names what it could not read, exit 1', async (t) => {
  const r = await run(['support', '-o', '-']);
  t.equal(r.code, 0, r.err);
  t.ok(gunzipSync(Buffer.from(r.out, 'latin1')).includes('summary.txt'), 'a gzip tar on stdout');
  const file = join(dir, 'reader.tar.gz');
  const reader = await run(['support', '-o', file], 'reader');
  t.equal(reader.code, 1);
  t.match(reader.err, /could not read \d+ part\(s\), named in summary\.txt/);
  t.match(unpack(file).get('summary.txt'), /could not read:\n[^]*Vaults\.example\.com is sensitive: admins only/);
  const extra = await run(['support', 'x']);
  t.same([extra.code, /unexpected argument "x"/.test(extra.err)], [2, true]);
});
