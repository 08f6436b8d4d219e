// The registry client against a real registry: Debian's docker-registry (Distribution 2.8, unpacked by `npm run
// setup`) on loopback over HTTPS with a CA of the test's own, filled by skopeo from an OCI layout umoci made. The
// image is pulled by the digest skopeo reports, its blobs are the layout's bytes; without the CA the TLS failure is
// named; a tag is refused before anything is asked. `appliance build` pulls an extension from it by digest through
// the same client (with the definition's registryCA).
import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CACHE } from '../../scripts/lib/paths.ts';
import { freePort } from '../../qemu/free-port.ts';
import { parseOciReference, RegistryClient } from './registry.ts';
import { buildExtension, ExtensionRefused } from '../../image/appliance/extension-build.ts';

const REGISTRY = join(CACHE, 'tools', 'docker-registry', 'usr', 'bin', 'docker-registry');
const has = (cmd: string) => {
  try {
    execFileSync('which', [cmd], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

if (!existsSync(REGISTRY) || !has('skopeo') || !has('umoci') || !has('openssl')) {
  t.plan(0, `needs ${REGISTRY} (npm run setup unpacks it), skopeo, umoci and openssl`);
} else {
  await registryTests();
}

async function registryTests(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'distribution-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = (cmd: string, ...args: string[]) =>
    execFileSync(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  // A CA of the test's own and the registry's certificate for 127.0.0.1.
  run('openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=test registry CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  run('openssl', 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1',
    '-keyout', 'tls.key', '-out', 'tls.csr');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run('openssl', 'x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
    '-extfile', 'san.ext', '-out', 'tls.crt');
  const port = await freePort();
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'config.yml'), `version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}}
http:
  addr: 127.0.0.1:${port}
  tls: {certificate: ${join(dir, 'tls.crt')}, key: ${join(dir, 'tls.key')}}
`);
  const registry = spawn(REGISTRY, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  registry.stderr.on('data', (d: Buffer) => {
    said += d.toString();
  });
  t.teardown(() => registry.kill());
  const ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(`https://127.0.0.1:${port}/v2/`).then(() => true, (e: Error) => !/ECONNREFUSED/.test(
      String((e.cause as Error | undefined)?.message ?? e.message)));
    if (up) break;
    if (Date.now() > deadline) throw new Error(`docker-registry did not start: ${said}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // An image made as a person would: umoci's layout with one file, pushed by skopeo.
  const layout = join(dir, 'oci');
  run('umoci', 'init', '--layout', layout);
  run('umoci', 'new', '--image', `${layout}:v1`);
  run('umoci', 'unpack', '--image', `${layout}:v1`, join(dir, 'bundle'));
  writeFileSync(join(dir, 'bundle', 'rootfs', 'hello.txt'), 'hello from a registry\n');
  mkdirSync(join(dir, 'bundle', 'rootfs', 'bin'));
  writeFileSync(join(dir, 'bundle', 'rootfs', 'bin', 'hello'), '#!/bin/hello\n', { mode: 0o755 });
  run('umoci', 'repack', '--image', `${layout}:v1`, join(dir, 'bundle'));
  run('skopeo', 'copy', '--quiet', '--dest-tls-verify=false', '--digestfile', join(dir, 'digest'),
    `oci:${layout}:v1`, `docker://127.0.0.1:${port}/team/hello:v1`);
  const digest = readFileSync(join(dir, 'digest'), 'utf8').trim();

  t.test('pulled by digest over HTTPS with its CA: the manifest and blobs are the layout\'s bytes', async (t) => {
    const ref = parseOciReference(`oci://127.0.0.1:${port}/team/hello@${digest}`);
    if (typeof ref === 'string') throw new Error(ref);
    const client = new RegistryClient(ref, { ca: [ca] });
    const m = await client.manifest();
    t.equal(m.digest, digest);
    t.equal(m.layers.length, 1);
    for (const d of [m.config, ...m.layers]) {
      const file = join(dir, d.digest.slice(7));
      await client.blob(d, file);
      t.same(readFileSync(file), readFileSync(join(layout, 'blobs', 'sha256', d.digest.slice(7))),
        `${d.mediaType}: the layout's bytes`);
    }
    const untrusted = await new RegistryClient(ref).manifest().then(() => undefined, (e: Error) => e);
    t.match(untrusted, /TLS: the server's certificate is not signed by a CA the image trusts/,
      'without its CA: the TLS failure named');
    t.match(parseOciReference(`oci://127.0.0.1:${port}/team/hello:v1`), /not by digest/);
  });

  t.test('appliance build: an extension from the registry by digest, through the same client', async (t) => {
    const progress: string[] = [];
    const e = { name: 'hello', source: { registry: `oci://127.0.0.1:${port}/team/hello@${digest}` },
      fields: { executable: '/bin/hello', ready: 'started' } };
    const o = { outDir: join(dir, 'out'), version: '1.0.0', progress: (m: string) => progress.push(m),
      registryCA: join(dir, 'ca.crt') };
    const built = await buildExtension(e, o);
    t.equal(built.built, true);
    const files = execFileSync('unsquashfs', ['-l', '-d', '', built.path], { encoding: 'utf8' });
    t.match(files, /\/hello\.txt\n/, 'the image\'s files');
    t.match(progress, [/pulling oci:\/\/127\.0\.0\.1/, /pulling sha256:/]);
    progress.length = 0;
    const again = await buildExtension(e, o);
    t.equal(again.built, false, 'built again: the digest is the content, nothing pulled or packed');
    t.same(progress, []);
    const other = await buildExtension({ ...e, source: { registry: `oci://127.0.0.1:${port}/team/hello@sha256:${
      '0'.repeat(64)}` } }, o).catch((err: Error) => err);
    t.ok(other instanceof ExtensionRefused);
    t.match(other, /not found \(HTTP 404\)/, 'a digest the registry does not have: refused, named');
  });
}
