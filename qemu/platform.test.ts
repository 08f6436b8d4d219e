// The config sources in the real machine: kernel command line (inline and URL), QEMU
// fw_cfg, NoCloud (ISO on a CD-ROM, vfat disk, ds=nocloud-net in the SMBIOS serial) and
// an OpenStack config drive. Seed servers are real HTTP servers on 127.0.0.1 that the
// guest reaches through slirp's guestfwd (10.0.2.100:80); nothing leaves the host.
// EC2 and GCE (at 169.254.169.254) are tested on the host (plugins/platform/sources.test.ts):
// slirp forwards only addresses inside its own network, and a guest moved into
// 169.254.0.0/16 was not reachable through hostfwd (still to solve).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { bootWithApi, type ApiVm } from './api-vm.ts';
import type { VmOptions } from './launch.ts';
import { files, startServer } from '../plugins/platform/testing/metadata-servers.ts';

const dir = mkdtempSync(join(tmpdir(), 'platform-vm-'));
const server = await startServer();
t.teardown(() => server.close());
const SEED_HOST = { guestAddr: '10.0.2.100', guestPort: 80, hostPort: server.port };

const motd = (text: string) => `metadata: {type: motd, id: platform}\nspec: {text: "${text}"}\n`;

/** Files into a directory tree, returned. */
function tree(name: string, content: Record<string, string>): string {
  const root = join(dir, name);
  for (const [p, text] of Object.entries(content)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  return root;
}
function iso(name: string, label: string, content: Record<string, string>): string {
  const out = join(dir, `${name}.iso`);
  execFileSync('xorriso', ['-as', 'mkisofs', '-quiet', '-output', out, '-volid', label, '-joliet', '-rock',
    tree(name, content)], { stdio: 'pipe' });
  return out;
}
function vfat(name: string, label: string, content: Record<string, string>): string {
  const out = join(dir, `${name}.img`);
  execFileSync('truncate', ['-s', '4M', out]);
  execFileSync('mkfs.vfat', ['-n', label, out], { stdio: 'pipe' });
  for (const [p, text] of Object.entries(content)) {
    const f = join(dir, `${name}-${p}`);
    writeFileSync(f, text);
    execFileSync('mcopy', ['-i', out, f, `::${p}`]);
  }
  return out;
}

/** Boots, waits until the config is applied (or ms pass), returns the VM; the caller kills it. */
async function bootUntilApplied(o: Partial<VmOptions>, addressing: 'static' | 'dhcp' = 'static', ms = 90_000) {
  const vm = await bootWithApi({ memoryMiB: 320, ...o }, addressing);
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

t.test('QEMU fw_cfg: #cloud-config, with the keys this system does not run listed as ignored', async (t) => {
  const file = join(dir, 'fwcfg.yaml');
  writeFileSync(file, '#cloud-config\nhostname: from-fwcfg\nruncmd: [[touch, /x]]\npackages: [nginx]\n');
  const { vm, status } = await bootUntilApplied({ fwcfg: [{ name: 'opt/dev.appliance/config', file }] });
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: fw-cfg/);
  t.match(status, /cloud-config runcmd: commands are not run: this system has no shell/);
  t.match(status, /cloud-config packages: this system has no package manager/);
  t.match((await vm.poll(['get', 'hostnamestatus'], /from-fwcfg/)).out, /from-fwcfg/);
  t.match(await yaml(vm, 'platform'), /platform: qemu\n\s+detectedBy: a QEMU fw_cfg config file/);
  t.match(vm.vm.console(), /config from fw-cfg \(cloud-config\) applied/);
});

t.test('NoCloud ISO on a CD-ROM: meta-data, network-config v2 static address, #cloud-config hostname', async (t) => {
  const seed = iso('cidata', 'cidata', {
    'meta-data': 'instance-id: iid-nocloud-iso\nlocal-hostname: from-meta\n',
    'user-data': '#cloud-config\nhostname: from-userdata\nfqdn: from-userdata.example.net\n',
    'network-config': 'version: 2\nethernets:\n  eth0:\n    addresses: [10.0.2.15/24]\n    gateway4: 10.0.2.2\n'
      + '    nameservers: {addresses: [10.0.2.3]}\n    dhcp6: true\n',
  });
  // No ip= and no DHCP answer needed: the API is reachable through the address network-config gives.
  const { vm, status } = await bootUntilApplied({ disks: [{ file: seed, interface: 'cdrom' }] }, 'dhcp');
  t.teardown(() => vm.vm.kill());
  t.match(status, /source: nocloud/);
  t.match(status, /instanceId: iid-nocloud-iso/);
  t.match(await yaml(vm, 'platform'),
    /platform: nocloud[\s\S]*detectedBy: a volume labelled cidata[\s\S]*instanceId: iid-nocloud-iso/);
  t.match((await vm.run(['get', 'addressstatus'])).out, /eth0\/10\.0\.2\.15\/24\s.*platform/);
  t.match(await yaml(vm, 'mergeddhcpspec', 'eth0'), /enabled: false/);
  t.match((await vm.poll(['get', 'hostnamestatus'], /from-userdata\.example\.net/)).out, /from-userdata\.example\.net/,
    "user-data's hostname (config layer) over meta-data's (platform layer)");
  t.match(await yaml(vm, 'platformnetwork'), /network-config ethernets\.eth0\.dhcp6: not supported yet/);
  t.match(await yaml(vm, 'resolverstatus'), /10\.0\.2\.3/);
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
