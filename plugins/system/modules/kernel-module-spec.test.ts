// kernel-module-spec and kernel-module-status on the host: modules.dep resolution, load
// order, EEXIST, errors in the status, unload on destroy (dependencies too, while
// unused). The host's kernel must not get our modules, so the two syscalls go to a
// loader that keeps its own /proc/modules with reference counts as the kernel keeps
// them; the real finit_module runs in the QEMU test (qemu/system.test.ts).
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerHarness } from '../../../cosi/conformance/controller-harness.ts';
import { builtinCodecs } from '../../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../../index.ts';
import { kernelModuleMergeController } from './kernel-module-merge.ts';
import { kernelModuleSpecController } from './kernel-module-spec.ts';
import { kernelModuleStatusController } from './kernel-module-status.ts';
import type { ModuleLoader } from '../../../machinery/kernel/module-index.ts';
import { moduleNameOf, parseModulesDep } from '../../../machinery/kernel/modules-dep.ts';
import {
  KERNEL_MODULE_SPEC_STATUS_TYPE, KERNEL_MODULE_SPEC_TYPE, KERNEL_MODULE_STATUS_TYPE, SYSTEM_NS,
} from '../../../proto/gen/resource-types.ts';

const dir = mkdtempSync(join(tmpdir(), 'modules-'));
const procModules = join(dir, 'proc-modules');
const dep = [
  'kernel/net/ipv4/udp_tunnel.ko:',
  'kernel/net/ipv6/ip6_udp_tunnel.ko:',
  'kernel/drivers/net/vxlan/vxlan.ko: kernel/net/ipv6/ip6_udp_tunnel.ko kernel/net/ipv4/udp_tunnel.ko',
  'kernel/drivers/net/dummy.ko:',
  'kernel/drivers/net/broken.ko:',
].join('\n') + '\n';
writeFileSync(join(dir, 'modules.dep'), dep);
writeFileSync(join(dir, 'modules.builtin'), 'kernel/fs/ext4/ext4.ko\n');

// The kernel's view: what is loaded, and who uses whom.
const deps = new Map([...parseModulesDep(dep)].map(([name, e]) => [name, e.deps.map(moduleNameOf)]));
const loaded = new Set(['already_there']);
const writeProc = () => writeFileSync(procModules, [...loaded].map((m) => {
  const users = [...loaded].filter((u) => deps.get(u)?.includes(m));
  return `${m} 8192 ${users.length} ${users.length ? `${users.join(',')},` : '-'} Live 0x0`;
}).join('\n') + '\n');
writeProc();
const calls: string[] = [];
const loader: ModuleLoader = {
  load(path, params) {
    calls.push(`load ${path.slice(dir.length + 1)}${params ? ' ' + params : ''}`);
    const name = moduleNameOf(path);
    if (name === 'broken') throw Object.assign(
      new Error('finit_module: Exec format error (ENOEXEC)'), { code: 'ENOEXEC' },
    );
    if (loaded.has(name)) throw Object.assign(new Error('exists'), { code: 'EEXIST' });
    loaded.add(name);
    writeProc();
  },
  unload(name) {
    calls.push(`unload ${name}`);
    if ([...loaded].some((u) => deps.get(u)?.includes(name))) {
      throw Object.assign(new Error('in use'), { code: 'EWOULDBLOCK' });
    }
    loaded.delete(name);
    writeProc();
  },
};

const sources = { dir, procModules };
const h = await controllerHarness(t, [
  kernelModuleMergeController(), kernelModuleSpecController(loader, sources), kernelModuleStatusController(sources),
], { codecs: builtinCodecs(builtinTypes()) });
const spec = (id: string) => ({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE, id });
const status = (id: string) =>
  h.spec<Record<string, unknown>>({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_STATUS_TYPE, id });
const lsmod = (id: string) =>
  h.spec<Record<string, unknown>>({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE, id });

t.test('modules already loaded are listed without a spec', async (t) => {
  t.match(await h.until(async () => (await lsmod('already_there')) !== undefined, true) && await lsmod('already_there'),
    { requested: false, refCount: 0 });
});

t.test('a module is loaded after its dependencies, deepest first, with its parameters', async (t) => {
  await h.create(spec('vxlan'), { parameters: 'udp_port=4790' });
  t.equal(await h.until(async () => (await status('vxlan'))?.state, 'applied'), 'applied');
  t.same(calls, [
    'load kernel/net/ipv4/udp_tunnel.ko', 'load kernel/net/ipv6/ip6_udp_tunnel.ko',
    'load kernel/drivers/net/vxlan/vxlan.ko udp_port=4790',
  ]);
  t.same((await status('vxlan'))?.loaded, ['udp_tunnel', 'ip6_udp_tunnel', 'vxlan'], 'what it loaded, as data');
  t.match(await h.until(async () => (await lsmod('udp_tunnel'))?.usedBy, ['vxlan']) && await lsmod('udp_tunnel'),
    { requested: false, refCount: 1, usedBy: ['vxlan'] });
  t.equal((await lsmod('vxlan'))?.requested, true);
});

t.test('a dependency that is there already is not loaded again', async (t) => {
  calls.length = 0;
  await h.create(spec('dummy'), {});
  t.equal(await h.until(async () => (await status('dummy'))?.state, 'applied'), 'applied');
  t.same(calls, ['load kernel/drivers/net/dummy.ko']);
});

t.test('unknown, broken and built-in modules', async (t) => {
  await h.create(spec('no-such-module'), {});
  await h.create(spec('broken'), {});
  await h.create(spec('ext4'), {});
  t.match(await h.until(async () => (await status('no_such_module'))?.state, 'error')
    && (await status('no_such_module'))?.error,
    new RegExp('module "no_such_module" is not shipped in this image '
      + '\\(5 modules are: broken, dummy, ip6_udp_tunnel, udp_tunnel, vxlan\\)'));
  t.match(await h.until(async () => (await status('broken'))?.state, 'error') && (await status('broken'))?.error,
    /broken.ko is not a module this kernel can load \(ENOEXEC/);
  t.match(await h.until(async () => (await status('ext4'))?.builtin, true) && await status('ext4'),
    { state: 'applied', builtin: true });
  t.equal((await status('vxlan'))?.state, 'applied', 'the others are untouched');
  for (const id of ['no-such-module', 'broken', 'ext4']) await h.remove(spec(id));
});

t.test('destroying a spec unloads what it loaded, dependencies too, and nothing else', async (t) => {
  calls.length = 0;
  await h.remove(spec('dummy'));
  t.same(calls, ['unload dummy']);
  await h.remove(spec('vxlan'));
  t.same(calls, ['unload dummy', 'unload vxlan', 'unload ip6_udp_tunnel', 'unload udp_tunnel'],
    'the module, then its now unused dependencies');
  t.same([...loaded], ['already_there'], 'the kernel is as it was');
  t.same(await h.until(() => h.ids({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE }), ['already_there']),
    ['already_there']);
});

t.test('a dependency another spec asks for stays loaded', async (t) => {
  await h.create(spec('vxlan'), {});
  t.equal(await h.until(async () => (await status('vxlan'))?.state, 'applied'), 'applied');
  t.same((await status('vxlan'))?.loaded, ['udp_tunnel', 'ip6_udp_tunnel', 'vxlan']);
  await h.create(spec('udp-tunnel'), {});
  t.equal(await h.until(async () => (await lsmod('udp_tunnel'))?.requested, true), true,
    'asked for by its own spec too');
  calls.length = 0;
  await h.remove(spec('vxlan'));
  t.same(calls, ['unload vxlan', 'unload ip6_udp_tunnel'], 'udp_tunnel is requested by its own spec');
  t.ok(loaded.has('udp_tunnel'));
});

t.test('a kernel without module support (no /proc/modules) has nothing loaded; '
  + 'a spec says why it cannot load', async (t) => {
  const bare = { dir: join(dir, 'none'), procModules: join(dir, 'none', 'modules') };
  const refuse: ModuleLoader = {
    load: () => {
      throw Object.assign(new Error('finit_module: Function not implemented (ENOSYS)'), { code: 'ENOSYS' });
    },
    unload: () => {
      throw Object.assign(new Error('delete_module: Function not implemented (ENOSYS)'), { code: 'ENOSYS' });
    },
  };
  const hb = await controllerHarness(t, [
    kernelModuleMergeController(), kernelModuleSpecController(refuse, bare), kernelModuleStatusController(bare),
  ], { codecs: builtinCodecs(builtinTypes()) });
  await hb.create(spec('vxlan'), {});
  const st = () =>
    hb.spec<Record<string, unknown>>({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_STATUS_TYPE, id: 'vxlan' });
  t.equal(await hb.until(async () => (await st())?.state, 'error'), 'error');
  t.match((await st())?.error, /ships no modules/);
  t.same(await hb.ids({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE }), []);
  t.same(hb.logged.filter((l) => l.level === 'error'), [], 'no controller failed');
});
