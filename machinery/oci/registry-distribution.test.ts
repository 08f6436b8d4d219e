// The registry client against a real registry: Debian's docker-registry (Distribution 2.8, unpacked by `npm run
// setup`) on loopback over HTTPS with a CA of the test's own, filled by skopeo from an OCI layout umoci made. The
// image is pulled by the digest skopeo reports, its blobs are the layout's bytes; without the CA the TLS failure is
// named; a tag is refused before anything is asked. `appliance build` pulls an extension from it by digest through
// the same client (with the definition's registryCA).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributionMissing, startDistributionRegistry } from '../../scripts/lib/distribution-registry.ts';
import { parseOciReference, RegistryClient } from './registry.ts';
import { buildExtension, ExtensionRefused } from '../../image/appliance/extension-build.ts';

const missing = distributionMissing();
if (missing) t.plan(0, missing);
else await registryTests();

async function registryTests(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'distribution-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = (cmd: string, ...args: string[]) =>
    execFileSync(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const registry = await startDistributionRegistry(dir);
  t.teardown(() => registry.close());
  const { port, ca } = registry;

  // An image made as a person would: umoci's layout with one file, pushed by skopeo.
  const layout = join(dir, 'oci');
  run('umoci', 'init', '--layout', layout);
  run('umoci', 'new', '--image', `${layout}:v1`);
  run('umoci', 'unpack', '--image', `${layout}:v1`, join(dir, 'bundle'));
  writeFileSync(join(dir, 'bundle', 'rootfs', 'hello.txt'), 'hello from a registry\n');
  mkdirSync(join(dir, 'bundle', 'rootfs', 'bin'));
  writeFileSync(join(dir, 'bundle', 'rootfs', 'bin', 'hello'), '#!/bin/hello\n', { mode: 0o755 });
  run('umoci', 'repack', '--image', `${layout}:v1`, join(dir, 'bundle'));
  const digest = registry.push(`${layout}:v1`, 'team/hello:v1');

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
      registryCA: registry.caFile };
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
