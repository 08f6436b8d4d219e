// The resource model on a booted machine that took its address by DHCP (as a user's
// does): loopback up by default; every example of the README applied one after
// another while the API stays reachable through the address DHCP gave; every served
// type's proto_spec decoded by an independent client (Python, classes protoc generated
// from proto/) and compared with its yaml_spec; then every example deleted and the
// machine exactly as before (links, routes, sysctls, modules, /etc files).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { SPEC_FILES, WIRE_FILES } from '../scripts/gen-proto.ts';
import { bootWithApi } from './api-vm.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
// The disk the README's MountSpec names (LABEL=appdata), so that example mounts for real.
const disk = join(mkdtempSync(join(tmpdir(), 'resources-')), 'appdata.img');
execFileSync('truncate', ['-s', '16M', disk]);
execFileSync('mke2fs', ['-q', '-t', 'ext4', '-L', 'appdata', disk]);
const { vm, run, poll, endpoint, tls, awaitPlugins } = await bootWithApi(
  { append: ['appliance.test.plugins'], disks: [{ file: disk, format: 'raw' }] }, 'dhcp',
);
// Subtests run in order; top-level code after the first t.test would race the root test's end (and its teardown).
let before: Awaited<ReturnType<typeof snapshot>>;
t.teardown(() => vm.kill());
const json = async (args: string[]) => {
  const r = await run([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`cosictl ${args.join(' ')}: ${r.err}`);
  return JSON.parse(r.out) as { metadata: { type: string; id: string }; spec: Record<string, unknown> };
};

/** The README's "What else you can declare" block, one document at a time. */
function readmeExamples(): { type: string; id: string; text: string }[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /What else you can declare[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md: no ```yaml block after "What else you can declare"');
  return block.split(/^---$/m).map((text) => {
    const doc = YAML.parse(text) as { metadata: { type: string; id: string } };
    return { type: doc.metadata.type, id: doc.metadata.id, text };
  });
}

/** A file of the guest, read through the test-reader plugin (or why it could not be). */
async function guestRead(path: string): Promise<string> {
  const id = `snap-${path.replace(/[^a-z0-9]+/gi, '-')}`.toLowerCase().slice(0, 60);
  await run(['delete', 'testfileread', id]);
  await run(['apply', '-f', '-'], `metadata: {type: testfileread, id: ${id}}\nspec: {path: ${path}}\n`);
  const got = await poll(['get', 'testfilecontent', id, '-o', 'json'], /"(content|error)"/, 60_000);
  if (got.code !== 0) throw new Error(`reading ${path} through test-reader: ${got.err}\n${
    vm.console().split('\n').filter((l) => /test-reader|plugin/.test(l)).slice(-10).join('\n')
  }`);
  const c = JSON.parse(got.out) as { spec: { content?: string; error?: string } };
  await run(['delete', 'testfileread', id]);
  return c.spec.content ?? `(${c.spec.error})`;
}

/** What the machine looks like from outside, through the API and the test-reader plugin. */
async function snapshot() {
  // lsmod is the system plugin's, which starts with the second wave (once the first runs).
  await awaitPlugins(['system']);
  const linkList = await run(['get', 'links', '-o', 'yaml']);
  const read = guestRead;
  const lsmod = (await run(['get', 'lsmod'])).out
    .split('\n').slice(1).map((l) => l.split(/\s+/)[2]).filter(Boolean).sort();
  return {
    links: YAML.parseAllDocuments(linkList.out)
      .map((d) => d.toJS() as { metadata: { id: string }; spec: Record<string, unknown> })
      .map((r) => ({ id: r.metadata.id, up: r.spec.up, mtu: r.spec.mtu, addresses: r.spec.addresses })),
    routes: await read('/proc/net/route'),
    forward: await read('/proc/sys/net/ipv4/ip_forward'),
    hostname: await read('/proc/sys/kernel/hostname'),
    resolv: await read('/etc/resolv.conf'),
    mounts: await read('/proc/self/mounts'),
    lsmod,
  };
}

t.test('the machine took its address by DHCP, and loopback is up', async (t) => {
  t.match(
    (await poll(['get', 'addressspecstatus', 'eth0/10.0.2.15/24'], /applied/)).out,
    /10\.0\.2\.15\/24\s+eth0\s+applied\s+dhcp/,
  );
  t.match(
    (await json(['get', 'links', 'lo'])).spec, { up: true, addresses: ['127.0.0.1/8', '::1/128'] },
    'lo up with its addresses',
  );
  t.match(
    (await json(['get', 'mergeddhcpspec', 'eth0'])).spec, { enabled: true, layer: 'default' },
    'DHCP on eth0 is a visible setting',
  );
});

t.test('every README example, applied one after another, leaves the API reachable at the DHCP address', async (t) => {
  before = await snapshot();
  const examples = readmeExamples();
  t.ok(examples.length >= 9, `${examples.length} examples`);
  for (const ex of examples) {
    const r = await run(['apply', '-f', '-'], ex.text);
    t.equal(r.code, 0, `${ex.type}/${ex.id} applied: ${r.err}`);
    const v = await run(['get', 'versions']);
    t.equal(v.code, 0, `API reachable after ${ex.type}/${ex.id}`);
  }
  t.match(
    (await poll(['get', 'addressspecstatus', 'eth0/10.0.2.99/24'], /applied/)).out, /applied\s+config/,
    'the extra address is there',
  );
  t.match(
    (await json(['get', 'links', 'eth0'])).spec.addresses, ['10.0.2.15/24', '10.0.2.99/24'], 'beside the DHCP address',
  );
  const lease = (await json(['get', 'leases', 'eth0'])).spec;
  t.match(lease, { state: 'bound', address: '10.0.2.15/24' }, `the lease is kept: ${JSON.stringify(lease)}`);
  t.match((await poll(['get', 'routespecstatus', '198.51.100.0/24/1024'], /applied/)).out, /applied/);
  t.match((await poll(['get', 'linkspecstatus', 'eth0'], /1400/)).out, /applied\s+true\s+1400/);
  t.match(
    (await poll(['get', 'hostnamespecstatus', 'hostname', '-o', 'json'],
      /node1/)).out, /"fqdn": "node1\.example\.test"/,
  );
  t.match((await poll(['get', 'kernelparamspecstatus', 'net.ipv4.ip_forward'], /applied/)).out, /applied\s+1/);
  // Renamed for 0.2.0 (CHANGELOG.md): a script's former names still work, by alias and by the full former type.
  for (const former of ['hostnamestatus', 'HostnameStatuses.net.appliance.dev']) {
    const old = await json(['get', former, 'hostname']);
    t.equal(old.metadata.type, 'HostnameSpecStatuses.net.appliance.dev', `${former}: served as the current type`);
  }
  t.match((await poll(['get', 'kernelmodulespecstatus', 'vxlan'], /applied/)).out, /applied/);
  t.match(
    (await poll(['get', 'mountspecstatus', '/var/mnt/data'], /applied/)).out, /applied\s+\/dev\/vda\s+ext4/,
    'the disk is mounted',
  );
});

t.test('an independent client decodes every served type\'s proto_spec and finds its yaml_spec', async (t) => {
  const gen = mkdtempSync(join(tmpdir(), 'cosi-py-'));
  execFileSync('protoc', [
    '-I', join(root, 'proto'), '-I', '/usr/include', `--python_out=${gen}`, ...WIRE_FILES, ...SPEC_FILES(),
  ]);
  let out = '';
  let code = 0;
  try {
    const pem = (name: string, text: string) => {
      const p = join(gen, name);
      writeFileSync(p, text);
      return p;
    };
    const admin = tls('admin');
    out = execFileSync('/usr/bin/python3', [
      join(root, 'qemu', 'proto_spec_check.py'), gen, endpoint,
      pem('ca.pem', admin.ca!), pem('cert.pem', admin.cert!), pem('key.pem', admin.key!), '127.0.0.1',
    ], { encoding: 'utf8', timeout: 120_000 });
  } catch (e) {
    out = String((e as { stdout?: string }).stdout ?? '');
    code = (e as { status?: number }).status ?? 1;
  }
  for (const line of out.trim().split('\n')) {
    const m = /^(ok|FAIL) (.*)$/.exec(line);
    if (m) t.ok(m[1] === 'ok', m[2]!);
  }
  t.equal(code, 0, 'no type disagrees');
  const types = out.split('\n').filter((l) => l.startsWith('ok ')).map((l) => l.slice(3, l.indexOf(':')));
  for (const type of [
    'Versions.runtime.appliance.dev', 'PluginStatuses.runtime.appliance.dev', 'KernelCmdlines.runtime.appliance.dev',
    'LinkStatuses.net.appliance.dev', 'LinkSpecs.net.appliance.dev', 'MergedLinkSpecs.net.appliance.dev',
    'LinkSpecStatuses.net.appliance.dev', 'AddressSpecs.net.appliance.dev', 'MergedAddressSpecs.net.appliance.dev',
    'AddressSpecStatuses.net.appliance.dev', 'RouteSpecStatuses.net.appliance.dev', 'DhcpLeases.net.appliance.dev',
    'HostnameSpecStatuses.net.appliance.dev', 'ResolverSpecStatuses.net.appliance.dev',
    'BlockDevices.storage.appliance.dev',
    'MountSpecStatuses.storage.appliance.dev', 'KernelParamSpecStatuses.system.appliance.dev',
    'KernelModuleStatuses.system.appliance.dev', 'KernelModuleSpecStatuses.system.appliance.dev',
    'TimeServerSpecs.time.appliance.dev', 'TimeStatuses.time.appliance.dev', 'ResourceDefinitions.meta.cosi.dev',
    'Namespaces.meta.cosi.dev',
  ]) t.ok(types.includes(type), `${type} compared`);
  t.match(out, /summary: \d+ types, \d+ resources, 0 disagreeing/);
});

t.test('deleting the examples restores the machine exactly', async (t) => {
  for (const ex of readmeExamples().reverse()) {
    const r = await run(['delete', ex.type, ex.id]);
    // The console's end says whether the machine died (OOM, panic) or was only slow to answer.
    if (!t.equal(r.code, 0, `${ex.type}/${ex.id} deleted: ${r.err}`, { console: vm.console().slice(-4000) })) return;
  }
  // The merged specs, statuses and kernel follow within moments.
  await poll(['get', 'links', 'eth0', '-o', 'json'], /"mtu": 1500[\s\S]*/);
  await poll(['get', 'lsmod'], /^(?![\s\S]*vxlan)/);
  const after = await snapshot();
  t.same(after.links, before.links, 'links: up, MTU, addresses');
  t.equal(after.routes, before.routes, '/proc/net/route');
  t.equal(after.forward, before.forward, 'net.ipv4.ip_forward');
  t.equal(after.hostname, before.hostname, 'the host name');
  t.equal(after.resolv, before.resolv, '/etc/resolv.conf');
  t.equal(after.mounts, before.mounts, 'the mounts (the disk unmounted)');
  t.same(after.lsmod, before.lsmod, 'the loaded modules (vxlan and its dependencies unloaded)');
});
