// hostname and resolvers through the real syscalls: sethostname(2) in a private UTS
// namespace (needs root), a temp /etc, ip= at the cmdline layer, a user spec over it.
// The layering itself is tested without root in network-layers.test.ts.
import t from 'tap';
import { mkdtempSync, readFileSync } from 'node:fs';
import { hostname as osHostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { cmdlineConfigController } from './cmdline-config.ts';
import { hostnameMergeController } from './hostname-merge.ts';
import { hostnameSpecController, nativeHostnameKernel } from './hostname-spec.ts';
import { resolverMergeController } from './resolver-merge.ts';
import { resolverSpecController } from './resolver-spec.ts';
import {
  HOSTNAME_SPEC_TYPE, HOSTNAME_SPEC_STATUS_TYPE, KERNEL_CMDLINE_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE,
  RESOLVER_SPEC_STATUS_TYPE,
  RUNTIME_NS,
} from '../../proto/gen/resource-types.ts';

if (process.getuid?.() !== 0) {
  t.plan(0, 'needs root (UTS namespace)');
} else {
  const n = native();
  const hostHostname = osHostname();
  n.unshareUts();
  const etc = mkdtempSync(join(tmpdir(), 'etc-'));
  const ip = '192.0.2.15::192.0.2.1:24:from-cmdline:eth0:off:192.0.2.53';
  const h = await controllerHarness(t, [
    cmdlineConfigController(), hostnameMergeController(), resolverMergeController(),
    hostnameSpecController(
      nativeHostnameKernel(() => n, etc, () => readFileSync('/proc/sys/kernel/domainname', 'utf8').trim()),
    ),
    resolverSpecController(etc),
  ], {
    codecs: builtinCodecs(builtinTypes()),
    seed: [
      newResource({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }, { raw: '', params: { ip } }),
    ],
  });
  const status = (type: string, id: string) => h.spec<Record<string, unknown>>({ namespace: NETWORK_NS, type, id });

  t.test('ip= gives hostname and resolver at the cmdline layer; a user spec overrides; '
    + 'the original returns', async (t) => {
    t.equal(await h.until(async () => (await status(HOSTNAME_SPEC_STATUS_TYPE, 'hostname'))?.hostname, 'from-cmdline'),
      'from-cmdline');
    t.equal(osHostname(), 'from-cmdline', 'sethostname(2) in our UTS namespace');
    t.equal(readFileSync(join(etc, 'hostname'), 'utf8'), 'from-cmdline\n');
    t.same(await h.until(async () => (await status(RESOLVER_SPEC_STATUS_TYPE, 'resolvers'))?.servers, ['192.0.2.53']),
      ['192.0.2.53']);
    t.match(readFileSync(join(etc, 'resolv.conf'), 'utf8'), /^nameserver 192\.0\.2\.53$/m);

    await h.create({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, id: 'mine' }, { hostname: 'node1.example.test' });
    await h.create({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, id: 'mine' }, {
      servers: ['198.51.100.53', '198.51.100.54'], searchDomains: ['example.test'],
    });
    t.equal(await h.until(async () => (await status(HOSTNAME_SPEC_STATUS_TYPE, 'hostname'))?.fqdn,
      'node1.example.test'),
      'node1.example.test');
    t.equal(osHostname(), 'node1');
    t.match(readFileSync(join(etc, 'hosts'), 'utf8'), /127\.0\.1\.1\tnode1\.example\.test node1/);
    t.equal(await h.until(async () => (await status(RESOLVER_SPEC_STATUS_TYPE, 'resolvers'))?.layer, 'config'),
      'config');
    t.match(readFileSync(join(etc, 'resolv.conf'), 'utf8'),
      /nameserver 198\.51\.100\.53\nnameserver 198\.51\.100\.54\nsearch example\.test/);

    await h.remove({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, id: 'mine' });
    t.equal(await h.until(async () => (await status(HOSTNAME_SPEC_STATUS_TYPE, 'hostname'))?.hostname, 'from-cmdline'),
      'from-cmdline', 'falls back to the cmdline layer');
    t.equal(osHostname(), 'from-cmdline');
  });

  t.test('the host kept its hostname', async (t) => {
    t.not(hostHostname, 'from-cmdline');
  });
}
