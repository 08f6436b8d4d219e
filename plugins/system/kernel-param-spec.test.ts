// kernel-param against the real kernel: net.* sysctls of a private network
// namespace (needs root), so the host's values are never touched.
import t from 'tap';
import {
  mkdirSync, mkdtempSync, openSync, readFileSync, readSync, statSync, utimesSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../index.ts';
import { kernelParamMergeController } from './kernel-param-merge.ts';
import { kernelParamSpecController } from './kernel-param-spec.ts';
import { sysctlPath } from '../../machinery/sys/sysctl.ts';
import { kernelParamConfigController } from './kernel-param-config.ts';
import { KERNEL_PARAM_SPEC_TYPE, KERNEL_PARAM_SPEC_STATUS_TYPE, SYSTEM_NS } from '../../proto/gen/resource-types.ts';

t.test('without root, on a /proc/sys of files: layers, read-back, the original written back', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sysctl-'));
  mkdirSync(join(root, 'net', 'ipv4'), { recursive: true });
  writeFileSync(join(root, 'net', 'ipv4', 'ip_forward'), '0\n');
  const h = await controllerHarness(t, [kernelParamMergeController(), kernelParamSpecController(root)], {
    codecs: builtinCodecs(builtinTypes()),
  });
  const file = () => readFileSync(join(root, 'net', 'ipv4', 'ip_forward'), 'utf8').trim();
  const st = () =>
    h.spec<Record<string, string>>({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_STATUS_TYPE,
      id: 'net.ipv4.ip_forward' });
  await h.create({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'platform/forward' }, {
    key: 'net.ipv4.ip_forward', value: '1', layer: 'platform',
  });
  t.match(await h.until(async () => (await st())?.value, '1') && await st(),
    { state: 'applied', value: '1', original: '0', layer: 'platform' });
  await h.create({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'net.ipv4.ip_forward' }, { value: '2' });
  t.equal(await h.until(file, '2'), '2', 'config over platform');
  await h.remove({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'net.ipv4.ip_forward' });
  t.equal(await h.until(file, '1'), '1', 'the platform value again');
  await h.remove({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'platform/forward' });
  t.equal(file(), '0', 'the value from before the first write');
});

t.test('a value already in place is not written again (some keys refuse even the same value)', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sysctl-'));
  mkdirSync(join(root, 'vm'), { recursive: true });
  const path = join(root, 'vm', 'mmap_min_addr');
  writeFileSync(path, '65536\n');
  const past = new Date('2020-01-01T00:00:00Z');
  utimesSync(path, past, past);
  const h = await controllerHarness(t, [kernelParamMergeController(), kernelParamSpecController(root)], {
    codecs: builtinCodecs(builtinTypes()),
  });
  await h.create({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'vm.mmap_min_addr' }, { value: '65536' });
  const st = () => h.spec<Record<string, string>>({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_STATUS_TYPE,
    id: 'vm.mmap_min_addr' });
  t.match(await h.until(async () => (await st())?.state, 'applied') && await st(),
    { state: 'applied', value: '65536', original: '65536' });
  t.equal(statSync(path).mtime.getTime(), past.getTime(), 'the file was not written');
});

if (process.getuid?.() !== 0) {
  t.test('needs root', async (t) => {
    t.plan(0, 'needs root (network namespace)');
  });
} else {
  // Opened before leaving the host's namespace, this fd keeps reading the host's value.
  const hostFd = openSync('/proc/sys/net/ipv4/ip_forward', 'r');
  const readHost = () => {
    const b = Buffer.alloc(16);
    return b.toString('utf8', 0, readSync(hostFd, b, 0, 16, 0)).trim();
  };
  const hostForward = readHost();
  native().unshareNet();
  const h = await controllerHarness(t, [kernelParamMergeController(), kernelParamSpecController()], {
    codecs: builtinCodecs(builtinTypes()),
  });
  const { until } = h;
  const p = (id: string) => ({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id });
  const status = (id: string) =>
    h.spec<Record<string, string>>({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_STATUS_TYPE, id });

  t.test('set, read back, restore on delete', async (t) => {
    // Flip whatever the namespace has, so the write is observable on any host.
    const before = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();
    await h.create(p('net.ipv4.ip_forward'), { value: before === '1' ? '0' : '1' });
    const want = before === '1' ? '0' : '1';
    t.equal(await until(async () => (await status('net.ipv4.ip_forward'))?.value, want), want,
      'read back from the kernel');
    t.equal(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim(), want);
    await h.remove(p('net.ipv4.ip_forward'));
    t.equal(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim(), before, 'original value written back');
  });

  t.test('bad keys and values show in the status', async (t) => {
    await h.create(p('net.ipv4.no_such_knob'), { value: '1' });
    await h.create(p('net.ipv4.tcp_syn_retries'), { value: 'lots' });
    t.match(await until(async () => (await status('net.ipv4.no_such_knob'))?.error,
      'unknown kernel parameter "net.ipv4.no_such_knob"'), /unknown kernel parameter/);
    t.match((await until(async () => (await status('net.ipv4.tcp_syn_retries'))?.state, 'error'))
      && (await status('net.ipv4.tcp_syn_retries'))?.error, /refused the value/);
  });

  t.test('the host was not touched', async (t) => {
    t.equal(readHost(), hostForward, `host ip_forward still ${hostForward}`);
  });
}

t.test('the hardening defaults: published for the keys the kernel has, written, overridden by a user', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sysctl-hardening-'));
  mkdirSync(join(root, 'kernel'), { recursive: true });
  writeFileSync(join(root, 'kernel', 'kptr_restrict'), '0\n');
  writeFileSync(join(root, 'kernel', 'dmesg_restrict'), '0\n');
  const has = (key: string) => {
    try {
      readFileSync(sysctlPath(key, root));
      return true;
    } catch {
      return false;
    }
  };
  const h = await controllerHarness(t, [
    kernelParamConfigController({ has }), kernelParamMergeController(), kernelParamSpecController(root),
  ], { codecs: builtinCodecs(builtinTypes()) });
  const file = (k: string) => readFileSync(join(root, 'kernel', k), 'utf8').trim();
  t.equal(await h.until(() => file('kptr_restrict'), '2'), '2', 'kptr_restrict hardened');
  t.equal(await h.until(() => file('dmesg_restrict'), '1'), '1', 'dmesg_restrict hardened');
  const specs = (await h.state.list({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE })).map((r) => r.metadata.id);
  t.same(specs, ['default/kernel.dmesg_restrict', 'default/kernel.kptr_restrict'], 'only the keys this kernel has');
  await h.create({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'kernel.kptr_restrict' }, { value: '1' });
  t.equal(await h.until(() => file('kptr_restrict'), '1'), '1', 'a user\'s spec wins over the default');
  await h.remove({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id: 'kernel.kptr_restrict' });
  t.equal(await h.until(() => file('kptr_restrict'), '2'), '2', 'and the default is back when it goes');
});

t.test('on a host the hardening defaults are never published', async (t) => {
  const h = await controllerHarness(t, [kernelParamConfigController({})], { codecs: builtinCodecs(builtinTypes()) });
  await new Promise((r) => setTimeout(r, 100));
  t.same(await h.state.list({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE }), []);
});
