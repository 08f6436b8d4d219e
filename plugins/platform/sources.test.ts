// The config sources against real HTTP servers on loopback that are strict (IMDSv2
// tokens that expire, GCE's Metadata-Flavor both ways) and misbehave on purpose (slow,
// 500, truncated bodies, 404 user data). The sources' fixed addresses
// (169.254.169.254) are redirected to the test server; everything else is the real code.
import t, { type Test } from 'tap';
import { createPublicKey } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { generateKey, issueCertificate, keyToPem } from '../../machinery/pki/certificate.ts';
import { detectPlatform } from './detect.ts';
import { httpRequest } from '../../machinery/sys/http-get.ts';
import { platformSpecs } from './platform-network.ts';
import { cmdlineInline, cmdlineUrl, substitute } from './sources/cmdline.ts';
import { ec2 } from './sources/ec2.ts';
import { gce } from './sources/gce.ts';
import { fromSeed, nocloud, parseDs } from './sources/nocloud.ts';
import { openstack } from './sources/openstack.ts';
import { FW_CFG_FILE, fwCfg as fwCfgSource } from './sources/fw-cfg.ts';
import type { Outcome, SourceEnv, Volume } from './sources/source.ts';
import {
  faulty, files, GCE_VALUES, gceMetadata, imds, notFound, startServer, type Handler,
} from './testing/metadata-servers.ts';
import { configSourceController, lookForConfig, userDataOf } from './config-source.ts';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import type { UserDataSpec } from '../../proto/gen/spec-types.ts';
import {
  KERNEL_CMDLINE_TYPE, NETWORK_NS, PLATFORM_NS, ROUTE_SPEC_STATUS_TYPE, RUNTIME_NS, USER_DATA_TYPE,
} from '../../proto/gen/resource-types.ts';
import { USER_DATA_ID } from '../../machinery/model/singleton-ids.ts';

const server = await startServer();
const { port } = server;
t.teardown(() => server.close());

function env(over: Partial<SourceEnv> = {}): SourceEnv {
  return {
    params: {}, mac: '52:54:00:12:34:56', hostname: 'localhost',
    dmi: { uuid: '0b8c-uuid', serial: '', sysVendor: 'QEMU', productName: 'Standard PC', biosVendor: 'SeaBIOS' },
    volumes: () => [], readVolume: async () => new Map(), readFile: () => undefined, exists: () => false,
    http: (r) => httpRequest({ ...r, timeoutMs: 500, url: r.url.replace('169.254.169.254', `127.0.0.1:${port}`) }),
    ...over,
  };
}
const found = (o: Outcome) => {
  if (o.kind !== 'found') throw new Error(`${o.kind}: ${o.message}`);
  return o;
};
const serve = (h: Handler) => {
  server.handler = h;
  server.log.length = 0;
  return server.log;
};

t.test('EC2 IMDSv2: token first, user data and metadata with it, PlatformNetwork with the time server', async (t) => {
  const log = serve(imds({ userData: '#cloud-config\nhostname: from-ec2\n' }));
  const f = found(await ec2.fetch(env()));
  t.equal(log[0], 'PUT /latest/api/token');
  t.same(f.meta, { platform: 'aws', instanceId: 'i-0123456789abcdef0', hostname: 'ip-10-0-2-15', zone: 'eu-west-1b',
    region: 'eu-west-1', instanceType: 't3.small', addresses: ['10.0.2.15'] });
  t.equal(Buffer.from(f.userData!).toString(), '#cloud-config\nhostname: from-ec2\n');
  t.same(f.network?.timeServers, ['169.254.169.123']);
  t.match(f.message, /^IMDSv2: instance i-0123/);
});

t.test('EC2: an expired token (401) gets a new one; IMDSv1 only when the PUT answers 403/404/405', async (t) => {
  const log = serve(imds({ userData: 'x', uses: 2 }));
  found(await ec2.fetch(env()));
  t.ok(log.filter((l) => l.startsWith('PUT')).length >= 3, 'new tokens after expiry');
  for (const status of [403, 404, 405]) {
    serve(imds({ putStatus: status, userData: 'v1' }));
    const f = found(await ec2.fetch(env()));
    t.match(f.message, /IMDSv1/, `PUT ${status}: v1`);
  }
  serve(imds({ putStatus: 500 }));
  const r = await ec2.fetch(env());
  t.equal(r.kind, 'failed', 'PUT 500: no v1 fallback');
  t.match(r.message, /api\/token: HTTP 500/);
});

t.test('EC2: 404 user data is metadata without user data; 500, slow and truncated answers fail', async (t) => {
  serve(imds());
  const f = found(await ec2.fetch(env()));
  t.equal(f.userData, undefined);
  t.match(f.message, /no user data \(404\)/);
  serve(faulty(['500'], imds()));
  t.match((await ec2.fetch(env())).message, /HTTP 500/);
  serve(faulty(['slow'], imds(), 2000));
  const slow = await ec2.fetch(env());
  t.equal(slow.kind, 'failed');
  t.match(slow.message, /no complete answer within 500 ms/);
  serve(faulty(['truncated'], imds()));
  t.match((await ec2.fetch(env())).message, /cut short/);
  serve(faulty(['garbage'], imds()));
  t.match((await ec2.fetch(env())).message, /api\/token: HPE_/, 'garbage is a parse error');
  const log = serve(faulty(['500'], imds()));
  t.equal((await ec2.fetch(env())).kind, 'failed');
  t.equal((await ec2.fetch(env())).kind, 'found', 'and the next attempt succeeds');
  t.ok(log.length > 2);
});

t.test('GCE: Metadata-Flavor both ways; user data from instance attributes', async (t) => {
  serve(gceMetadata({ ...GCE_VALUES, 'attributes/user-data': '#cloud-config\nhostname: g\n' }));
  const f = found(await gce.fetch(env()));
  t.same(f.meta, { platform: 'gcp', instanceId: '4567890123', hostname: 'vm1', zone: 'europe-west1-b',
    region: 'europe-west1', instanceType: 'e2-medium' });
  t.same(f.network?.timeServers, ['metadata.google.internal']);
  serve(gceMetadata(GCE_VALUES, { flavorBack: false }));
  const r = await gce.fetch(env());
  t.equal(r.kind, 'failed');
  t.match(r.message, /lacks Metadata-Flavor/);
});

t.test('NoCloud: ds= parsing, seed over http, seed files', async (t) => {
  t.same(parseDs('nocloud-net;s=http://10.0.2.2:8000/seed/;h=node7;i=iid-7'),
    { kind: 'nocloud-net', seedfrom: 'http://10.0.2.2:8000/seed/', hostname: 'node7', instanceId: 'iid-7' });
  t.equal(parseDs('ec2'), undefined);
  const seed: Record<string, string> = {
    '/seed/meta-data': 'instance-id: iid-net\nlocal-hostname: seeded\n',
    '/seed/user-data': '#cloud-config\nntp: {servers: [10.0.2.3]}\n',
  };
  serve(files(seed));
  const e = env({ dmi: { ...env().dmi, serial: `ds=nocloud-net;s=http://127.0.0.1:${port}/seed/` } });
  t.equal(detectPlatform(e).platform, 'nocloud');
  t.match(detectPlatform(e).by, /SMBIOS serial/);
  t.equal(nocloud.network(e), true);
  const f = found(await nocloud.fetch(e));
  t.same(f.meta, { platform: 'nocloud', instanceId: 'iid-net', hostname: 'seeded' });
  t.same(f.network, { hostname: 'seeded', interfaces: [] });
  const noMeta = fromSeed(new Map([['user-data', Buffer.from('x')]]), 'vol');
  t.equal(noMeta.kind, 'failed');
  const vol: Volume = { devPath: '/dev/sr0', label: 'CIDATA', fstype: 'iso9660' };
  const seeded = env({
    volumes: () => [vol],
    readVolume: async (v, names) => {
      t.equal(v, vol);
      return new Map(names.map((n) => [n, n === 'meta-data' ? Buffer.from('instance-id: iid-vol\n')
        : n === 'network-config' ? Buffer.from('version: 2\nethernets: {eth0: {addresses: [10.0.2.20/24]}}\n')
          : undefined]));
    },
  });
  const v = found(await nocloud.fetch(seeded));
  t.equal(v.userData, undefined);
  t.same(v.network?.interfaces,
    [{ id: 'eth0', name: 'eth0', mac: '', dhcp4: false, dhcp6: 'off', addresses: ['10.0.2.20/24'], routes: [] }]);
  t.equal(detectPlatform(seeded).by, 'a volume labelled CIDATA');
});

t.test('OpenStack metadata service; kernel command line sources; detection', async (t) => {
  serve(files({
    '/openstack/latest/meta_data.json':
      JSON.stringify({ uuid: 'd8e02d56', hostname: 'os1.novalocal', availability_zone: 'nova' }),
  }));
  const f = found(await openstack.fetch(env()));
  t.same(f.meta, { platform: 'openstack', instanceId: 'd8e02d56', hostname: 'os1', zone: 'nova' });
  const inline = Buffer.from(gzipSync('metadata: {type: motd, id: m}\nspec: {text: inline}\n')).toString('base64');
  const i = found(await cmdlineInline.fetch(env({ params: { 'appliance.config.inline': inline } })));
  const ud = userDataOf(i, 'cmdline-inline', '');
  t.equal(ud.format, 'machine-config');
  t.match(ud.content, /text: inline/);
  t.equal((await cmdlineInline.fetch(env({ params: { 'appliance.config.inline': 'not base64!' } }))).kind, 'failed');
  t.equal(substitute('http://x/${uuid}/${mac}?h=${hostname}&s=${serial}', env()),
    'http://x/0b8c-uuid/52%3A54%3A00%3A12%3A34%3A56?h=localhost&s=');
  serve(files({ '/c/0b8c-uuid': 'metadata: {type: motd, id: u}\nspec: {text: url}\n' }));
  const url = `http://127.0.0.1:${port}/c/\${uuid}`;
  const u = found(await cmdlineUrl.fetch(env({ params: { 'appliance.config': url } })));
  t.match(Buffer.from(u.userData!).toString(), /text: url/);
  serve(notFound);
  t.equal((await cmdlineUrl.fetch(env({ params: { 'appliance.config': `http://127.0.0.1:${port}/x` } }))).kind,
    'failed', 'a URL the command line names is asked again on 404');
  t.same(detectPlatform(env({ params: { 'appliance.platform': 'gcp' } })),
    { platform: 'gcp', by: 'appliance.platform=gcp' });
  t.match(detectPlatform(env({ params: { 'appliance.platform': 'azure' } })).by, /is not a platform/);
  t.equal(detectPlatform(env({ dmi: { ...env().dmi, sysVendor: 'Amazon EC2' } })).platform, 'aws');
  t.equal(detectPlatform(env({ dmi: { ...env().dmi, productName: 'Google Compute Engine' } })).platform, 'gcp');
  t.equal(detectPlatform(env()).platform, 'metal');
  const bin = userDataOf({ ...i, userData: Buffer.from([0xff, 0xfe, 0x00]) }, 'x', '');
  t.match(bin.problem, /UTF-8/);
});

t.test('platform network -> platform-layer specs, interfaces matched by name or MAC', (t) => {
  const link = (id: string, mac: string) => ({ metadata: { id }, spec: { mac, type: 'ether', index: 2 } });
  const specs = platformSpecs({
    hostname: 'node1.example.net', nameservers: ['10.0.2.3'], timeServers: ['169.254.169.123'],
    interfaces: [
      { name: '', mac: '52:54:00:00:00:02', dhcp4: false, addresses: ['10.0.2.20/24'], mtu: 1400,
        routes: [{ via: '10.0.2.2' }] },
      { name: '', mac: '52:54:00:00:00:99', dhcp4: true }, // no such link (yet)
    ],
  }, [link('eth0', '52:54:00:00:00:01'), link('eth1', '52:54:00:00:00:02')] as never);
  t.same(specs.map((s) => `${s.type.split('.')[0]} ${s.id} ${JSON.stringify(s.spec)}`), [
    'DhcpSpecs platform/eth1 {"enabled":false,"link":"eth1","layer":"platform"}',
    'AddressSpecs platform/eth1/10.0.2.20/24 {"address":"10.0.2.20/24","link":"eth1","layer":"platform"}',
    'RouteSpecs platform/eth1/ipv4/default {"gateway":"10.0.2.2","link":"eth1","layer":"platform"}',
    'LinkSpecs platform/eth1 {"link":"eth1","mtu":1400,"layer":"platform"}',
    'HostnameSpecs platform {"hostname":"node1","domainname":"example.net","layer":"platform"}',
    'ResolverSpecs platform {"servers":["10.0.2.3"],"layer":"platform"}',
    'TimeServerSpecs platform {"servers":["169.254.169.123"],"layer":"platform"}',
  ]);
  t.end();
});

t.test('https config URLs are verified: a trusted CA is fetched; unknown CA, wrong name, ftp refused', async (t) => {
  const caKey = generateKey();
  const now = Date.now();
  const validity = { notBefore: new Date(now - 60_000), notAfter: new Date(now + 3600_000) };
  const ca = issueCertificate({
    subject: { commonName: 'test config CA' }, publicKey: createPublicKey(caKey), selfKey: caKey, usage: 'ca',
    ...validity,
  });
  const key = generateKey();
  const cert = issueCertificate({
    subject: { commonName: 'config server' }, publicKey: createPublicKey(key),
    issuer: { certificate: ca, key: caKey }, usage: 'server', names: ['127.0.0.1'], ...validity,
  });
  const body = 'metadata: {type: motd, id: s}\n';
  const tlsServer = createHttpsServer({ key: keyToPem(key), cert }, (_q, s) => s.end(body));
  await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    tlsServer.closeAllConnections();
    tlsServer.close();
  });
  const { port: tlsPort } = tlsServer.address() as AddressInfo;
  const base = `https://127.0.0.1:${tlsPort}`;
  const trusted = await httpRequest({ url: `${base}/c`, ca: [ca] });
  t.ok(trusted.ok && trusted.body.toString().includes('id: s'), 'fetched over TLS with the CA trusted');
  const image = await httpRequest({ url: `${base}/c` });
  t.match(!image.ok && image.message, /not signed by a CA the image trusts \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/,
    'the image bundle (Node\'s roots) does not trust a private CA');
  const wrongName = await httpRequest({ url: `https://localhost:${tlsPort}/c`, ca: [ca] });
  t.match(!wrongName.ok && wrongName.message, /does not name this host/);
  const ftp = await httpRequest({ url: 'ftp://127.0.0.1/c' });
  t.match(!ftp.ok && ftp.message, /only http:\/\/ and https:\/\/ are supported \(got ftp:\)/);
  // A server whose certificate expired an hour ago: the message names the machine's clock, as every time check does.
  const old = issueCertificate({
    subject: { commonName: 'config server' }, publicKey: createPublicKey(key), issuer: { certificate: ca, key: caKey },
    usage: 'server', names: ['127.0.0.1'], notBefore: new Date(now - 7200_000), notAfter: new Date(now - 3600_000),
  });
  const expiredServer = createHttpsServer({ key: keyToPem(key), cert: old }, (_q, s) => s.end(body));
  await new Promise<void>((r) => expiredServer.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    expiredServer.closeAllConnections();
    expiredServer.close();
  });
  const expired = await httpRequest({ url: `https://127.0.0.1:${(expiredServer.address() as AddressInfo).port}/c`,
    ca: [ca] });
  t.match(!expired.ok && expired.message,
    /: TLS: the server's certificate has expired \(CERT_HAS_EXPIRED\), by the machine's clock, which reads 20/);
});

t.test('lookForConfig: the sources read here, in order, as the controller\'s first pass with the network down; '
  + 'else where one may come from', async (t) => {
  const volume = (label: string): Volume => ({ devPath: '/dev/vdc', label, fstype: 'iso9660' });
  const config = Buffer.from('metadata: {type: hostnamespec, id: h}\nspec: {hostname: from-fwcfg}\n');
  const fwCfg = { exists: (path: string) => path === FW_CFG_FILE,
    readFile: (path: string) => (path === FW_CFG_FILE ? config : undefined) };
  const look = (over: Partial<SourceEnv>) => lookForConfig(env({
    readFile: () => {
      throw new Error('nothing here is read');
    },
    readVolume: () => {
      throw new Error('nothing here is mounted');
    },
    ...over,
  }));
  t.same(await look({}), {}, 'nothing anywhere (bare metal, QEMU without fw_cfg): the platform plugin starts later');
  const fromFwCfg = await look(fwCfg);
  t.same(fromFwCfg, { userData: userDataOf(found(await fwCfgSource.fetch(env(fwCfg))), 'fw-cfg', '', 'qemu') },
    'a fw_cfg file: read, the user data its pass would publish');
  t.match(fromFwCfg.userData, { source: 'fw-cfg', format: 'machine-config', problem: '', content: /from-fwcfg/ });
  t.match(await look({ params: { 'appliance.config.inline': Buffer.from('#cloud-config\nhostname: x\n')
    .toString('base64') } }), { userData: { source: 'cmdline-inline', format: 'cloud-config' } }, 'an inline config');
  t.same(await look({ params: { 'appliance.config': 'http://10.0.2.2/c.yaml' } }), { comes: 'network' },
    'a URL on the command line: fetched once the network is up, by the plugin');
  t.same(await look({ ...fwCfg, params: { 'appliance.config': 'http://10.0.2.2/c.yaml' } }), { comes: 'here' },
    'a URL ahead of a fw_cfg file: the plugin asks the URL first once the network is up, so it decides');
  t.same(await look({ exists: fwCfg.exists }), { comes: 'here', why: 'fw-cfg: nothing here is read' },
    'a fw_cfg file that cannot be read: the plugin asks again, and starts first');
  t.match(await look({ volumes: () => [volume('cidata')], readVolume: async () => new Map([
    ['meta-data', Buffer.from('instance-id: iid-seed\n')], ['user-data', Buffer.from('#cloud-config\nhostname: s\n')],
  ]) }), { userData: { source: 'nocloud', instanceId: 'iid-seed', format: 'cloud-config' }, startFirst: true },
    'a NoCloud seed volume: its metadata is the plugin\'s to publish, so it starts first too');
  t.match(await look({ volumes: () => [volume('config-2')] }), { comes: 'here', why: /^openstack: / },
    'an OpenStack config drive that cannot be read');
  t.same(await look({ params: { ds: 'nocloud;s=http://10.0.2.2/seed/' } }), { comes: 'network' },
    'a NoCloud seed over HTTP');
  t.same(await look({ params: { ds: 'nocloud;i=iid-1' } }), {}, 'NoCloud named with no seed: nothing to read');
  t.same(await look({ dmi: { uuid: '', serial: '', sysVendor: 'Amazon EC2', productName: 'm5.large',
    biosVendor: 'Amazon EC2' } }), { comes: 'network' }, 'EC2: its metadata service');
  t.same(await look({ dmi: { uuid: '', serial: '', sysVendor: 'OpenStack Foundation', productName: 'OpenStack Nova',
    biosVendor: 'SeaBIOS' } }), { comes: 'network' }, 'OpenStack without a drive: its metadata service');
  t.same(await look({ params: { 'appliance.platform': 'aws' }, volumes: () => [volume('cidata')] }),
    { comes: 'network' }, 'a platform named on the command line: its own source');
  t.same(await look({ params: { 'appliance.platform': 'metal' }, volumes: () => [volume('cidata')] }), {},
    'metal named: a seed volume is not its source');
});

t.test('lookForConfig finds what the config source controller publishes, with the network down and up', async (t) => {
  serve(files({ '/c.yaml': 'metadata: {type: motd, id: u}\nspec: {text: url}\n' }));
  const url = { 'appliance.config': `http://127.0.0.1:${port}/c.yaml` };
  const config = Buffer.from('metadata: {type: motd, id: f}\nspec: {text: fwcfg}\n');
  const fwCfg = {
    exists: (p: string) => p === FW_CFG_FILE, readFile: (p: string) => (p === FW_CFG_FILE ? config : undefined),
  };
  const seed = { volumes: () => [{ devPath: '/dev/vdc', label: 'cidata', fstype: 'iso9660' }],
    readVolume: async () => new Map([['meta-data', Buffer.from('instance-id: iid-seed\nlocal-hostname: s1\n')],
      ['user-data', Buffer.from('#cloud-config\nhostname: s\n')]]) };
  const inline = { 'appliance.config.inline': Buffer.from('#cloud-config\nhostname: i\n').toString('base64') };
  /** The UserData the real controller publishes on a harness, the network up (a default route) or not. */
  const published = async (t: Test, e: SourceEnv, networkUp: boolean) => {
    const h = await controllerHarness(t, [configSourceController({ env: () => e })], {
      seed: [
        newResource({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }, { raw: '', params: e.params }),
        ...(networkUp ? [newResource({ namespace: NETWORK_NS, type: ROUTE_SPEC_STATUS_TYPE, id: 'default' },
          { state: 'applied', destination: '0.0.0.0/0' })] : [])],
    });
    const p = { namespace: PLATFORM_NS, type: USER_DATA_TYPE, id: USER_DATA_ID };
    for (let i = 0; i < 200 && !(await h.spec(p)); i++) await new Promise((r) => setTimeout(r, 10));
    return h.spec<UserDataSpec>(p);
  };
  for (const [what, over] of [['fw_cfg', fwCfg], ['an inline config', { params: inline }],
    ['a NoCloud seed volume', seed], ['fw_cfg and an inline config', { ...fwCfg, params: inline }],
    ['a URL ahead of fw_cfg', { ...fwCfg, params: url }]] as const) {
    await t.test(what, async (t) => {
      const e = env(over);
      const look = await lookForConfig(e);
      const down = await published(t, e, false);
      const up = await published(t, e, true);
      if (look.userData) {
        t.same(look.userData, down, 'the same as the controller\'s pass with the network down');
        t.same(look.userData, up, 'and with it up');
      } else {
        t.notSame(down, up, 'the controller\'s pass depends on the network: PID 1 leaves it to the plugin');
        t.same(look, { comes: 'here' });
      }
    });
  }
});
