// The config sources in the real machine: kernel command line (inline and URL), QEMU
// fw_cfg, NoCloud (ISO on a CD-ROM, vfat disk, ds=nocloud-net in the SMBIOS serial) and
// an OpenStack config drive. Each config carries the run's API CA, as a user's would
// (cloud-config as a MIME multipart with our own config in a part), so the test reads
// the machine over mutual TLS once the config is applied; cloud-config alone leaves the
// machine in maintenance mode. Seed servers are real HTTP servers on 127.0.0.1 that the
// guest reaches through slirp's guestfwd (10.0.2.100:80); nothing leaves the host.
// EC2 and GCE run with slirp's network moved to 169.254.0.0/16 (guestfwd forwards only
// addresses inside it), so 169.254.169.254:80 reaches a metadata server on loopback.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { bootWithApi, TEST_CA_DOCUMENT, type ApiVm } from './api-vm.ts';
import type { VmOptions } from './launch.ts';
import {
  CLOUD_NET, isoSeed, METADATA_ADDR, multipartUserData, SEED_ADDR, stateDisk, vfatSeed,
} from './config-seeds.ts';
import {
  EC2_META, faulty, files, GCE_VALUES, gceMetadata, imds, startServer,
} from '../plugins/platform/testing/metadata-servers.ts';

const dir = mkdtempSync(join(tmpdir(), 'platform-vm-'));
const server = await startServer();
t.teardown(() => server.close());
const SEED_HOST = { ...SEED_ADDR, hostPort: server.port };
const METADATA_HOST = { ...METADATA_ADDR, hostPort: server.port };

/** Our own config: a motd, and the run's CA. */
const motd = (text: string) =>
  `metadata: {type: motd, id: platform}\nspec: {text: "${text}"}\n---\n${TEST_CA_DOCUMENT()}`;
/** cloud-config and our own config (the CA) as MIME multipart user-data. */
const withSecrets = (cloudConfig: string) => multipartUserData(cloudConfig, TEST_CA_DOCUMENT());
const iso = (name: string, label: string, content: Record<string, string>) => isoSeed(dir, name, label, content);
const vfat = (name: string, label: string, content: Record<string, string>) => vfatSeed(dir, name, label, content);

/** Boots, waits until the config is applied (or ms pass), returns the VM; the caller kills it. */
async function bootUntilApplied(o: Partial<VmOptions>, addressing: 'static' | 'dhcp' = 'static', ms = 90_000) {
  const vm = await bootWithApi({ memoryMiB: 320, ...o }, addressing, { secrets: 'none' });
  const st = await vm.poll(['get', 'configstatus', 'machine', '-o', 'yaml'], /state: applied/, ms);
  return { vm, status: st.out };
}
const yaml = async (vm: ApiVm, ...args: string[]) => (await vm.run(['get', ...args, '-o', 'yaml'])).out;

t.test('kernel command line: an inline config (base64 of gzip)', async (t) => {
  const inline = gzipSync(motd('inline')).toString('base64');
  const { vm, status } = await bootUntilApplied({ append: [`appliance.config.inline=${inline}`] });
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: cmdline-inline/);
  t.match(await yaml(vm, 'motd', 'platform'), /text: inline/);
  t.match(await yaml(vm, 'configsource', 'cmdline-inline'), /state: used/);
});

t.test('kernel command line: a config URL with ${uuid}, fetched once the network is up', async (t) => {
  const uuid = '8d3c9f64-1b5e-4a8e-9c1a-2f6e0d4b7a11';
  server.handler = files({ [`/config/${uuid}.yaml`]: motd('by url') });
  const { vm, status } = await bootUntilApplied({
    append: ['appliance.config=http://10.0.2.100/config/${uuid}.yaml'], smbios: [`type=1,uuid=${uuid}`],
    guestfwd: [SEED_HOST],
  });
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: cmdline-url/);
  t.match(await yaml(vm, 'motd', 'platform'), /text: by url/);
  t.ok(server.log.includes(`GET /config/${uuid}.yaml`), 'the uuid was substituted');
});

t.test('QEMU fw_cfg: #cloud-config alone is applied, the keys this system does not run listed as ignored, '
  + 'and the API stays in maintenance mode until given a CA', async (t) => {
  const file = join(dir, 'fwcfg.yaml');
  writeFileSync(file, ['#cloud-config', 'hostname: from-fwcfg', 'runcmd: [[touch, /x]]', 'packages: [nginx]',
    'write_files:', '  - {path: /run/app/settings.json, content: "{\\"debug\\": false}", permissions: "0640"}',
    '  - {path: /etc/motd, content: nope}', ''].join('\n'));
  const vm = await bootWithApi({ memoryMiB: 320, fwcfg: [{ name: 'opt/dev.appliance/config', file }] }, 'static',
    { secrets: 'none' });
  t.teardown(() => vm.vm.kill());
  const applied = (await vm.pollInsecure(['get', 'configstatus', 'machine', '-o', 'yaml'], /state: applied/, 90_000))
    .out;
  t.match(applied, /source: fw-cfg/);
  t.match(applied, /cloud-config runcmd: commands are not run: this system has no shell/);
  t.match(applied, /cloud-config packages: this system has no package manager/);
  t.match((await vm.runInsecure(['get', 'apicert', '-o', 'yaml'])).out, /mode: maintenance/,
    'no secrets in plain cloud-init user data: maintenance, never plaintext');
  t.equal((await vm.runInsecure(['get', 'hostnamespecstatus'])).code, 1, 'maintenance reads no more than status');
  // The user's next step: the CA through the maintenance API, merged into what cloud-config gave.
  const given = await vm.runInsecure(['apply', '-f', '-'], TEST_CA_DOCUMENT());
  t.equal(given.code, 0, given.err);
  t.match((await vm.poll(['get', 'hostnamespecstatus'], /from-fwcfg/)).out, /from-fwcfg/);
  await vm.awaitPlugins(['system']); // the files are the system plugin's, of the second wave
  const written = (await vm.poll(['get', 'filespecstatus', '/run/app/settings.json', '-o', 'yaml'],
    /state: applied/)).out;
  t.match(written, new RegExp(`sha256: ${createHash('sha256').update('{"debug": false}').digest('hex')}`),
    'write_files written by the system plugin');
  t.match(applied, /write_files\[1\] \/etc\/motd: only files under \/run,/);
  t.match(await yaml(vm, 'platform'), /platform: qemu\n\s+detectedBy: a QEMU fw_cfg config file/);
  t.match(vm.vm.console(), /config from fw-cfg \(cloud-config\) applied/);
  t.match(vm.vm.console(), /engine: config: fw-cfg read before the plugins start/,
    'PID 1 read it on the platform plugin\'s behalf: its plugins start with the first wave');
});

t.test('NoCloud ISO on a CD-ROM: meta-data, network-config v2 static address, #cloud-config hostname', async (t) => {
  const seed = iso('cidata', 'cidata', {
    'meta-data': 'instance-id: iid-nocloud-iso\nlocal-hostname: from-meta\n',
    'user-data': withSecrets('#cloud-config\nhostname: from-userdata\nfqdn: from-userdata.example.net\n'),
    // Two default routes on one link (IPv4 and IPv6; QEMU's user network routes fec0::/64 through fec0::2), and
    // a duplicated key, which PyYAML (so cloud-init) reads as the last value, with a warning.
    'network-config': 'version: 2\nethernets:\n  eth0:\n    addresses: [10.0.2.15/24, "fec0::15/64"]\n'
      + '    gateway4: 10.0.2.2\n    gateway6: "fec0::2"\n    mtu: 1400\n    mtu: 1500\n'
      + '    nameservers: {addresses: [10.0.2.3]}\n    dhcp6: true\n    ipv6-privacy: true\n',
  });
  // No ip= and no DHCP answer needed: the API is reachable through the address network-config gives.
  const { vm, status } = await bootUntilApplied({ disks: [{ file: seed, interface: 'cdrom' }] }, 'dhcp');
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: nocloud/);
  t.match(status, /instanceId: iid-nocloud-iso/);
  t.match(vm.vm.console(), /engine: config: nocloud read before the plugins start/, 'the seed mounted by PID 1');
  // PID 1 read the seed and applied its config before the platform plugin started (Plugin.lookForConfig): the
  // plugin, of the second wave, publishes the metadata when its own pass finds the same seed.
  t.match((await vm.poll(['get', 'platform', '-o', 'yaml'], /instanceId: iid-nocloud-iso/)).out,
    /platform: nocloud[\s\S]*detectedBy: a volume labelled cidata[\s\S]*instanceId: iid-nocloud-iso/);
  // The config is applied before the network plugin has merged the platform layer over a DHCP lease that
  // may have come first (the same address): the address changes layer, and DHCP stops, a moment later.
  t.match((await vm.poll(['get', 'addressspecstatus'], /eth0\/10\.0\.2\.15\/24\s.*platform/)).out,
    /eth0\/10\.0\.2\.15\/24\s.*platform/);
  t.match((await vm.poll(['get', 'mergeddhcpspec', 'eth0', '-o', 'yaml'], /enabled: false/)).out,
    /enabled: false/);
  t.match((await vm.poll(['get', 'hostnamespecstatus'], /from-userdata\.example\.net/)).out,
    /from-userdata\.example\.net/,
    "user-data's hostname (config layer) over meta-data's (platform layer)");
  const platformNetwork = await yaml(vm, 'platformnetwork');
  t.match(platformNetwork, /dhcp6: auto/, 'dhcp6: true applied (DHCPv6 as the router advertisement says)');
  t.match(platformNetwork, /network-config ethernets\.eth0\.ipv6-privacy: not supported/);
  t.match(status, /network-config ethernets\.eth0\.ipv6-privacy: not supported/, 'the network part\'s ignored keys in '
    + 'ConfigStatus');
  t.match(status, /network-config line 8: the key "mtu" appears again/, 'a duplicated key warned about, not fatal');
  const routes = (await vm.poll(['get', 'routespecstatus'], /::\/0\s[\s\S]*applied/)).out;
  t.match(routes, /0\.0\.0\.0\/0\s+10\.0\.2\.2\s+eth0\s+applied/, 'the IPv4 default route');
  t.match(routes, /::\/0\s+fec0::2\s+eth0\s+applied/, 'and the IPv6 one beside it');
  t.match(await yaml(vm, 'resolverspecstatus'), /10\.0\.2\.3/);
});

t.test('NoCloud vfat disk labelled CIDATA: our own config as user-data', async (t) => {
  const seed = vfat('cidata-vfat', 'CIDATA', {
    'meta-data': 'instance-id: iid-vfat\n', 'user-data': motd('from vfat'),
  });
  const { vm, status } = await bootUntilApplied({ disks: [{ file: seed, format: 'raw' }] });
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: nocloud[\s\S]*instanceId: iid-vfat/);
  t.match(await yaml(vm, 'motd', 'platform'), /from vfat/);
});

t.test('ds=nocloud-net in the SMBIOS serial: the seed fetched over http', async (t) => {
  server.handler = files({
    '/seed/meta-data': 'instance-id: iid-net\nlocal-hostname: seeded-net\n', '/seed/user-data': motd('from seed url'),
  });
  const { vm, status } = await bootUntilApplied({
    smbios: ['type=1,serial=ds=nocloud-net;s=http://10.0.2.100/seed/'], guestfwd: [SEED_HOST],
  });
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: nocloud[\s\S]*instanceId: iid-net/);
  t.match(await yaml(vm, 'platform'), /detectedBy: ds=nocloud-net in the SMBIOS serial/);
  t.match(await yaml(vm, 'motd', 'platform'), /from seed url/);
});

t.test('OpenStack config drive', async (t) => {
  const drive = iso('config-2', 'config-2', {
    'openstack/latest/meta_data.json': JSON.stringify({ uuid: 'os-uuid-1', hostname: 'os1.novalocal' }),
    'openstack/latest/user_data': motd('from config drive'),
  });
  const o = await bootUntilApplied({ disks: [{ file: drive, interface: 'cdrom' }] });
  t.teardown(() => o.vm.vm.kill());
  t.match(o.status, /source: openstack[\s\S]*instanceId: os-uuid-1/);
  t.match(await yaml(o.vm, 'motd', 'platform'), /from config drive/);
  t.match(await yaml(o.vm, 'platform'), /detectedBy: a volume labelled config-2/);
});

t.test('EC2 (detected by its SMBIOS vendor): a strict IMDSv2 that fails at first (500, garbage, truncated, slow), '
  + 'the API serving meanwhile, then the config applied late with tokens that expire', async (t) => {
  server.handler = faulty(['500', 'garbage', 'truncated', 'slow'],
    imds({ userData: withSecrets('#cloud-config\nhostname: from-imds\n'), uses: 3 }), 8_000);
  server.log.length = 0;
  const vm = await bootWithApi({
    memoryMiB: 320, slirpNet: CLOUD_NET, guestfwd: [METADATA_HOST],
    smbios: ['type=1,manufacturer=Amazon EC2,product=t3.small'],
  }, 'static', { secrets: 'none' });
  t.teardown(() => vm.vm.kill());
  const said = /HTTP 500|HPE_|cut short|no complete answer/;
  t.match((await vm.pollInsecure(['get', 'configsource', 'ec2', '-o', 'yaml'], said, 90_000)).out, said,
    'what the source said is reported');
  t.match((await vm.runInsecure(['get', 'configstatus', 'machine', '-o', 'yaml'])).out, /state: maintenance/,
    'the API serves (in maintenance) while the metadata service fails');
  const st = await vm.poll(['get', 'configstatus', 'machine', '-o', 'yaml'], /state: applied/, 120_000);
  t.match(st.out, new RegExp(`source: ec2[\\s\\S]*instanceId: ${EC2_META['instance-id']}`));
  t.match(await yaml(vm, 'configsource', 'ec2'), /state: used[\s\S]*attempts: ([5-9]|\d\d)/);
  const platform = await yaml(vm, 'platform');
  t.match(platform, /platform: aws[\s\S]*detectedBy: SMBIOS vendor "Amazon EC2"/);
  for (const line of ['instanceType: t3.small', 'zone: eu-west-1b', 'region: eu-west-1']) t.match(platform, line);
  t.match((await vm.poll(['get', 'hostnamespecstatus'], /from-imds/)).out, /from-imds/);
  t.match(await yaml(vm, 'mergedtimeserverspec'), /169\.254\.169\.123/, "the platform's time server");
  t.ok(server.log.filter((l) => l === 'PUT /latest/api/token').length >= 2, 'an expired token was renewed');
  t.notOk(server.log.some((l) => l.startsWith('GET') && !l.startsWith('GET /latest/')), 'nothing but IMDS paths');
});

t.test('GCE (detected by its SMBIOS product): Metadata-Flavor both ways, user data from the instance attributes',
  async (t) => {
    const userData = withSecrets('#cloud-config\nhostname: g1\n');
    server.handler = gceMetadata({ ...GCE_VALUES, 'attributes/user-data': userData });
    const { vm, status } = await bootUntilApplied({
      slirpNet: CLOUD_NET, guestfwd: [METADATA_HOST],
      smbios: ['type=1,manufacturer=Google,product=Google Compute Engine'],
    });
    t.teardown(() => vm.vm.kill());
    t.match(status, new RegExp(`source: gce[\\s\\S]*instanceId: "?${GCE_VALUES.id}`));
    t.match(await yaml(vm, 'platform'), /platform: gcp[\s\S]*detectedBy: SMBIOS product "Google Compute Engine"/);
    t.match((await vm.poll(['get', 'hostnamespecstatus'], /g1/)).out, /g1/);
  });

t.test('a persisted config belongs to its instance: on a new instance the user data replaces it (and says so); '
  + 'the next boot on that instance keeps it', async (t) => {
  const state = stateDisk(dir, 'state-iid', {
    text: motd('saved on the old instance'), source: 'nocloud', instanceId: 'iid-old', savedAt: '2026-01-01T00:00:00Z',
  });
  const seed = vfat('cidata-iid', 'CIDATA', {
    'meta-data': 'instance-id: iid-new\n', 'user-data': motd('new instance'),
  });
  const disks = [{ file: state, format: 'raw' as const }, { file: seed, format: 'raw' as const }];
  let vm = await bootWithApi({ memoryMiB: 320, disks }, 'static', { secrets: 'none' });
  t.teardown(() => vm.vm.kill());
  t.match(vm.vm.console(), /persisted config from \S+ applied/, 'the saved config first, at boot');
  const replaced = await vm.poll(['get', 'configstatus', 'machine', '-o', 'yaml'], /instanceId: iid-new/, 90_000);
  t.match(replaced.out, /source: nocloud/);
  t.match(replaced.out,
    /a new instance \(iid-new; the persisted config was saved on\s+iid-old\):\s+the user data from/);
  t.match(await yaml(vm, 'motd', 'platform'), /new instance/);
  t.ok((await vm.vm.powerdown(60_000)).clean, 'powered off cleanly');
  vm = await bootWithApi({ memoryMiB: 320, disks }, 'static', { secrets: 'none' });
  await vm.poll(['get', 'configsource', 'nocloud', '-o', 'yaml'], /state: used/, 90_000);
  t.match((await vm.vm.waitFor(/the persisted config is kept: instance iid-new is the one it was saved on/, 30_000))[0],
    /iid-new/);
  t.match(await yaml(vm, 'configstatus', 'machine'), /source: state[\s\S]*instanceId: iid-new/);
  t.match(await yaml(vm, 'motd', 'platform'), /new instance/);
});
