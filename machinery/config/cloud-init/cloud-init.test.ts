// cloud-init input -> this system's config: user-data kinds, #cloud-config keys,
// network-config v1 and v2, meta-data, MIME multipart. The translated config must pass
// the same validation as any machine config (built-in definitions, offline).
import t from 'tap';
import { gzipSync } from 'node:zlib';
import type { DefinitionInput } from '../../../cosi/meta/definition.ts';
import { BUILTIN_NAMESPACES, BUILTIN_TYPES } from '../../../proto/gen/builtin-types.ts';
import { offlineValidationContext, validateConfig } from '../validate-config.ts';
import { parseMetaData } from './meta-data.ts';
import { prefixOf, translateNetworkConfig } from './network-config.ts';
import { translateUserDataWith } from './user-data.ts';
import { noJinja } from './jinja.ts';
import { parseYaml } from '../safe-yaml.ts';

const translate = (b: Uint8Array) => translateUserDataWith(b, noJinja);

const ctx = await offlineValidationContext(BUILTIN_TYPES as DefinitionInput[], BUILTIN_NAMESPACES);
const enc = (s: string) => new TextEncoder().encode(s);

t.test('#cloud-config: hostname, fqdn and ntp become resources; the rest is listed as ignored with why', (t) => {
  const r = translate(enc(`#cloud-config
hostname: web1
fqdn: web1.example.net
manage_etc_hosts: true
ntp:
  servers: [ntp1.example.net]
  pools: [pool.example.net]
runcmd: [[sh, -c, "echo hi"]]
packages: [nginx]
ssh_authorized_keys: [ssh-ed25519 AAAA]
frobnicate: 1
`));
  if (!r.ok) throw new Error(r.message);
  t.equal(r.data.format, 'cloud-config');
  const { docs } = validateConfig(r.data.config, ctx, 'user-data');
  t.same(docs.map((d) => [d.type, d.id, d.spec]), [
    ['HostnameSpecs.net.appliance.dev', 'cloud-init', { hostname: 'web1', domainname: 'example.net' }],
    ['TimeServerSpecs.time.appliance.dev', 'cloud-init', { servers: ['ntp1.example.net', 'pool.example.net'] }],
  ]);
  t.match(r.data.ignored.join('\n'), /runcmd: commands are not run: this system has no shell/);
  t.match(r.data.ignored.join('\n'), /packages: this system has no package manager/);
  t.match(r.data.ignored.join('\n'), /ssh_authorized_keys: this system has no login users or SSH/);
  t.match(r.data.ignored.join('\n'), /frobnicate: not supported by this system/);
  t.notMatch(r.data.ignored.join('\n'), /hostname|fqdn|ntp|manage_etc_hosts/);
  t.end();
});

t.test('user-data kinds: our own config as it is, gzip undone, scripts ignored, bad YAML refused', (t) => {
  const ours = 'metadata: {type: motd, id: m}\nspec: {text: hi}\n';
  const a = translate(gzipSync(ours));
  t.ok(a.ok && a.data.format === 'machine-config' && a.data.config === ours);
  const s = translate(enc('#!/bin/sh\necho pwned\n'));
  t.ok(s.ok && s.data.format === 'script' && s.data.config === '');
  t.match(s.ok ? s.data.ignored[0] : '', /a script, not run: this system has no shell/);
  const bad = translate(enc('#cloud-config\nhostname: [unclosed\n'));
  t.notOk(bad.ok);
  t.match(bad.ok ? '' : bad.message, /#cloud-config.*not valid YAML/);
  const deep = translate(enc(`#cloud-config\nx: ${'['.repeat(20_000)}\n`));
  t.match(deep.ok ? '' : deep.message, /nested/);
  const empty = translate(enc('  \n'));
  t.ok(empty.ok && empty.data.format === 'empty');
  t.end();
});

t.test('MIME multipart: cloud-config parts merged in order, our config parts used, others ignored', (t) => {
  const b64 = Buffer.from('#cloud-config\nntp: {servers: [10.0.0.1]}\n').toString('base64');
  const mime = `Content-Type: multipart/mixed; boundary="==BOUNDARY=="
MIME-Version: 1.0

--==BOUNDARY==
Content-Type: text/cloud-config; charset="us-ascii"

#cloud-config
hostname: first
--==BOUNDARY==
Content-Type: text/x-shellscript; charset="us-ascii"
Content-Disposition: attachment; filename="setup.sh"

#!/bin/sh
echo hi
--==BOUNDARY==
Content-Type: text/cloud-config
Content-Transfer-Encoding: base64

${b64}
--==BOUNDARY==
Content-Type: text/x-appliance-config

metadata: {type: motd, id: from-mime}
spec: {text: hello}
--==BOUNDARY==
Content-Type: text/cloud-config

hostname: second
--==BOUNDARY==--
`;
  const r = translate(enc(mime));
  if (!r.ok) throw new Error(r.message);
  t.equal(r.data.format, 'multipart');
  const { docs } = validateConfig(r.data.config, ctx, 'user-data');
  t.same(docs.map((d) => `${d.type}/${d.id}`).sort(), [
    'HostnameSpecs.net.appliance.dev/cloud-init', 'Motds.config.appliance.dev/from-mime',
    'TimeServerSpecs.time.appliance.dev/cloud-init',
  ].sort());
  t.same(docs.find((d) => d.id === 'cloud-init' && d.type.startsWith('Hostname'))?.spec, { hostname: 'second' });
  t.same(r.data.ignored,
    ['user-data part 2 (text/x-shellscript, setup.sh): a script, not run: this system has no shell']);
  t.end();
});

t.test('network-config v2 (netplan): by name and by MAC, static, dhcp4, routes, nameservers, mtu', (t) => {
  const y = parseYaml(`network:
  version: 2
  ethernets:
    eth0:
      addresses: [192.0.2.10/24]
      gateway4: 192.0.2.1
      mtu: 1400
      nameservers: {addresses: [192.0.2.53], search: [example.net]}
      routes: [{to: 198.51.100.0/24, via: 192.0.2.254, metric: 50}, {to: default, via: 192.0.2.2}]
    lan:
      match: {macaddress: "52:54:00:AB:CD:EF"}
      set-name: lan0
      dhcp4: true
      dhcp6: true
  bonds: {bond0: {interfaces: [eth1]}}
`);
  const r = translateNetworkConfig(y.ok ? y.value : undefined);
  if (!r.ok) throw new Error(r.message);
  t.same(r.network.interfaces, [
    { id: 'eth0', name: 'eth0', mac: '', dhcp4: false, dhcp6: 'off', addresses: ['192.0.2.10/24'], mtu: 1400,
      routes: [{ via: '192.0.2.1' }, { to: '198.51.100.0/24', via: '192.0.2.254', metric: 50 }, { via: '192.0.2.2' }] },
    { id: 'lan', name: '', mac: '52:54:00:ab:cd:ef', dhcp4: true, dhcp6: 'auto', addresses: [], routes: [] },
    { id: 'bond0', name: 'bond0', mac: '', kind: 'bond', bond: {}, dhcp4: false, dhcp6: 'off', addresses: [],
      routes: [] },
  ]);
  t.same(r.network.nameservers, ['192.0.2.53']);
  t.same(r.network.searchDomains, ['example.net']);
  t.same(r.network.ignored, [
    'network-config ethernets.lan.set-name: links are not renamed (match the name they have)',
    'network-config bonds.bond0.interfaces[0]: "eth1" is not the id of an ethernet of this config',
  ]);
  t.end();
});

t.test('network-config v1: physical with static and dhcp subnets, nameserver and route items', (t) => {
  const r = translateNetworkConfig({
    version: 1, config: [
      { type: 'physical', name: 'eth0', mac_address: '52:54:00:12:34:56', subnets: [
        { type: 'static', address: '192.0.2.10', netmask: '255.255.255.0', gateway: '192.0.2.1',
          dns_nameservers: ['192.0.2.53'] },
      ] },
      { type: 'physical', name: 'eth1', subnets: [{ type: 'dhcp' }, { type: 'dhcp6' }] },
      { type: 'nameserver', address: ['192.0.2.54'], search: ['example.org'] },
      { type: 'route', destination: '203.0.113.0/24', gateway: '192.0.2.99' },
      { type: 'vlan', name: 'eth0.10' },
    ],
  });
  if (!r.ok) throw new Error(r.message);
  t.same(r.network.interfaces, [
    { id: 'eth0', name: 'eth0', mac: '52:54:00:12:34:56', dhcp4: false, dhcp6: 'off', addresses: ['192.0.2.10/24'],
      routes: [{ via: '192.0.2.1' }, { to: '203.0.113.0/24', via: '192.0.2.99' }] },
    { id: 'eth1', name: 'eth1', mac: '', dhcp4: true, dhcp6: 'stateful', addresses: [], routes: [] },
  ]);
  t.same(r.network.nameservers, ['192.0.2.53', '192.0.2.54']);
  t.same(r.network.ignored, [
    'network-config config[4]: a VLAN needs vlan_id (1-4094) and vlan_link: left out',
  ]);
  t.equal(prefixOf('255.255.240.0'), 20);
  t.equal(prefixOf('255.0.255.0'), undefined, 'a non-contiguous netmask is not a prefix');
  t.notOk(translateNetworkConfig({ version: 3 }).ok);
  t.end();
});

t.test('meta-data: instance-id and local-hostname; other keys listed', (t) => {
  const r = parseMetaData('instance-id: iid-local01\nlocal-hostname: cloudimg\npublic-keys: [x]\n');
  t.same(r, { ok: true, meta: { instanceId: 'iid-local01', hostname: 'cloudimg',
    ignored: ['meta-data public-keys: this system has no SSH logins'],
    raw: { 'instance-id': 'iid-local01', 'local-hostname': 'cloudimg', 'public-keys': ['x'] } } });
  t.same(parseMetaData('{"instance-id": "i-1"}'),
    { ok: true, meta: { instanceId: 'i-1', hostname: '', ignored: [], raw: { 'instance-id': 'i-1' } } });
  const twice = parseMetaData('instance-id: a\nlocal-hostname: x\ninstance-id: b\n');
  t.same(twice.ok && [twice.meta.instanceId, twice.meta.ignored], ['b', [
    'meta-data line 3: the key "instance-id" appears again in its mapping: the last value is used, as cloud-init does',
  ]], 'a duplicated key: the last wins, with a warning (PyYAML), not a failed source');
  t.notOk(parseMetaData('- a list\n').ok);
  t.end();
});

t.test('#cloud-config write_files: FileSpecs for /run, /var and /tmp; what cannot be honoured listed with why', (t) => {
  const packed = gzipSync('compressed\n').toString('base64');
  const r = translate(enc(`#cloud-config
write_files:
  - path: /run/app/settings.json
    content: '{"debug": false}'
    permissions: '0640'
  - path: /var/lib/app/blob
    encoding: b64
    content: aGVsbG8K
    owner: app:app
    permissions: 0600
  - path: /tmp/packed
    encoding: gz+b64
    content: ${packed}
    defer: true
  - path: /etc/motd
    content: nope
  - path: /var/log/app.log
    content: more
    append: true
  - path: /run/suid
    permissions: '4755'
  - path: /run/app/settings.json
    content: '{"debug": true}'
  - just a string
`));
  if (!r.ok) throw new Error(r.message);
  const { docs } = validateConfig(r.data.config, ctx, 'user-data');
  t.same(docs.map((d) => [d.type, d.id, d.spec]), [
    ['FileSpecs.system.appliance.dev', 'cloud-init-file-1',
      { path: '/var/lib/app/blob', content: 'hello\n', mode: '0600' }],
    ['FileSpecs.system.appliance.dev', 'cloud-init-file-2', { path: '/tmp/packed', content: 'compressed\n' }],
    ['FileSpecs.system.appliance.dev', 'cloud-init-file-6',
      { path: '/run/app/settings.json', content: '{"debug": true}' }],
  ], 'the last entry for a path wins, as cloud-init writes them in order');
  const ignored = r.data.ignored.join('\n');
  t.match(ignored, /write_files\[0\] \/run\/app\/settings.json: replaced by write_files\[6\]/);
  t.match(ignored, /write_files\[1\] \/var\/lib\/app\/blob: owner app:app ignored, written as root/);
  t.match(ignored, /write_files\[3\] \/etc\/motd: only files under \/run, \/var and \/tmp are written/);
  t.match(ignored, /write_files\[4\] \/var\/log\/app.log: append is not supported/);
  t.match(ignored, /write_files\[5\] \/run\/suid: permissions "4755" set setuid/);
  t.match(ignored, /write_files\[7\] must be a mapping/);
  const bomb = translate(enc(`#cloud-config
write_files: [{path: /tmp/bomb, encoding: gz+b64, content: ${gzipSync(Buffer.alloc(2 << 20)).toString('base64')}}]
`));
  t.match(bomb.ok ? bomb.data.ignored.join('\n') : bomb.message, /\/tmp\/bomb: content is not gzip of at most 1 MiB/);
  t.end();
});
