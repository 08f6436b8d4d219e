// hostname and resolvers: layers merged, written to a temp /etc, sethostname in a
// private UTS namespace (needs root).
import t from 'tap';
import { mkdtempSync, readFileSync } from 'node:fs';
import { hostname as osHostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { until } from '../../init/cosi/conformance/converge.ts';
import { ControllerRuntime } from '../../init/cosi/controller/runtime.ts';
import { newResource } from '../../init/cosi/resource/resource.ts';
import { MemoryState } from '../../init/cosi/state/memory-state.ts';
import { KERNEL_CMDLINE_TYPE, RUNTIME_NS } from '../../init/engine/resource-types.ts';
import { hostnameController } from './hostname.ts';
import { ipCmdlineController } from './ip-cmdline.ts';
import { pickByLayer } from './layers.ts';
import { resolversController } from './resolvers.ts';
import { HOSTNAME_SPEC_TYPE, HOSTNAME_STATUS_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE, RESOLVER_STATUS_TYPE } from './types.ts';

t.test('the highest layer wins, ties by id', async (t) => {
  t.equal(pickByLayer([{ id: 'b', spec: { layer: 'cmdline' as const } }, { id: 'a', spec: { layer: 'user' as const } }, { id: 'c', spec: { layer: 'dhcp' as const } }])!.id, 'a');
  t.equal(pickByLayer([{ id: 'b', spec: { layer: 'dhcp' as const } }, { id: 'a', spec: { layer: 'dhcp' as const } }])!.id, 'a');
  t.equal(pickByLayer([]), undefined);
});

if (process.getuid?.() !== 0) {
  t.test('needs root', async (t) => { t.plan(0, 'needs root (UTS namespace)'); });
} else {
  const n = native();
  const hostHostname = osHostname();
  n.unshareUts();
  const etc = mkdtempSync(join(tmpdir(), 'etc-'));
  const state = new MemoryState();
  await state.create(newResource({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' }, { raw: '', params: { ip: '192.0.2.15::192.0.2.1:24:from-cmdline:eth0:off:192.0.2.53' } }));
  const rt = new ControllerRuntime(state, { log: () => ({ info: () => {}, warn: () => {}, error: () => {} }) });
  for (const c of [hostnameController(() => n, etc), resolversController(etc), ipCmdlineController()]) rt.register(c);
  rt.start();
  t.teardown(() => rt.stop());
  const status = (type: string, id: string) => state.get({ namespace: NETWORK_NS, type, id }).then((r) => r.spec as Record<string, unknown>, () => undefined);

  t.test('ip= gives hostname and resolver at the cmdline layer; a user spec overrides', async (t) => {
    t.equal(await until(async () => (await status(HOSTNAME_STATUS_TYPE, 'hostname'))?.hostname, 'from-cmdline'), 'from-cmdline');
    t.equal(osHostname(), 'from-cmdline', 'sethostname(2) in our UTS namespace');
    t.equal(readFileSync(join(etc, 'hostname'), 'utf8'), 'from-cmdline\n');
    t.same(await until(async () => (await status(RESOLVER_STATUS_TYPE, 'resolvers'))?.servers, ['192.0.2.53']), ['192.0.2.53']);
    t.match(readFileSync(join(etc, 'resolv.conf'), 'utf8'), /^nameserver 192\.0\.2\.53$/m);

    await state.create(newResource({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, id: 'mine' }, { hostname: 'node1.example.test', layer: 'user' }));
    await state.create(newResource({ namespace: NETWORK_NS, type: RESOLVER_SPEC_TYPE, id: 'mine' }, { servers: ['198.51.100.53', '198.51.100.54'], searchDomains: ['example.test'], layer: 'user' }));
    t.equal(await until(async () => (await status(HOSTNAME_STATUS_TYPE, 'hostname'))?.fqdn, 'node1.example.test'), 'node1.example.test');
    t.equal(osHostname(), 'node1');
    t.match(readFileSync(join(etc, 'hosts'), 'utf8'), /127\.0\.1\.1\tnode1\.example\.test node1/);
    t.equal(await until(async () => (await status(RESOLVER_STATUS_TYPE, 'resolvers'))?.source, 'mine'), 'mine');
    t.match(readFileSync(join(etc, 'resolv.conf'), 'utf8'), /nameserver 198\.51\.100\.53\nnameserver 198\.51\.100\.54\nsearch example\.test/);

    await state.teardownAndDestroy({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, id: 'mine' });
    t.equal(await until(async () => (await status(HOSTNAME_STATUS_TYPE, 'hostname'))?.hostname, 'from-cmdline'), 'from-cmdline', 'falls back to the cmdline layer');
  });

  t.test('the host kept its hostname', async (t) => {
    t.not(hostHostname, 'from-cmdline');
  });
}
