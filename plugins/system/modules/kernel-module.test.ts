// kernel-module on the host: modules.dep resolution, load order, EEXIST, errors in
// the status and unload on destroy. The host's kernel must not get our modules, so
// the two syscalls go to a loader that keeps its own /proc/modules; the real
// finit_module runs in the QEMU test (qemu/system.test.ts).
import t from 'tap';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../../../init/cosi/conformance/converge.ts';
import { ControllerRuntime } from '../../../init/cosi/controller/runtime.ts';
import { newResource } from '../../../init/cosi/resource/resource.ts';
import { MemoryState } from '../../../init/cosi/state/memory-state.ts';
import { KERNEL_MODULE_SPEC_TYPE, KERNEL_MODULE_STATUS_TYPE, SYSTEM_NS } from '../types.ts';
import { kernelModuleController, type ModuleLoader } from './kernel-module.ts';
import { moduleNameOf } from './modules-dep.ts';

const dir = mkdtempSync(join(tmpdir(), 'modules-'));
const procModules = join(dir, 'proc-modules');
writeFileSync(join(dir, 'modules.dep'), [
  'kernel/net/ipv4/udp_tunnel.ko:',
  'kernel/net/ipv6/ip6_udp_tunnel.ko:',
  'kernel/drivers/net/vxlan/vxlan.ko: kernel/net/ipv6/ip6_udp_tunnel.ko kernel/net/ipv4/udp_tunnel.ko',
  'kernel/drivers/net/dummy.ko:',
  'kernel/drivers/net/broken.ko:',
].join('\n') + '\n');
writeFileSync(join(dir, 'modules.builtin'), 'kernel/fs/ext4/ext4.ko\n');
writeFileSync(procModules, 'already_there 4096 0 - Live 0x0\n');

const calls: string[] = [];
const loader: ModuleLoader = {
  load(path, params) {
    calls.push(`load ${path.slice(dir.length + 1)}${params ? ' ' + params : ''}`);
    const name = moduleNameOf(path);
    if (name === 'broken') throw Object.assign(new Error('finit_module: Exec format error (ENOEXEC)'), { code: 'ENOEXEC' });
    if (readFileSync(procModules, 'utf8').includes(`${name} `)) throw Object.assign(new Error('exists'), { code: 'EEXIST' });
    appendFileSync(procModules, `${name} 8192 0 - Live 0x0\n`);
  },
  unload(name) {
    calls.push(`unload ${name}`);
    writeFileSync(procModules, readFileSync(procModules, 'utf8').split('\n').filter((l) => !l.startsWith(`${name} `)).join('\n'));
  },
};

const state = new MemoryState();
const rt = new ControllerRuntime(state, { log: () => ({ info: () => {}, warn: () => {}, error: () => {} }) });
rt.register(kernelModuleController(loader, { dir, procModules }));
rt.start();
t.teardown(() => rt.stop());
const spec = (id: string) => ({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE, id });
const status = (id: string) => state.get({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE, id }).then((r) => r.spec as Record<string, unknown>, () => undefined);

t.test('modules already loaded are listed without a spec', async (t) => {
  t.equal(await until(async () => (await status('already_there'))?.state, 'loaded'), 'loaded');
  t.equal((await status('already_there'))?.requested, false);
});

t.test('a module is loaded after its dependencies, deepest first, with its parameters', async (t) => {
  await state.create(newResource(spec('vxlan'), { parameters: 'udp_port=4790' }));
  t.equal(await until(async () => (await status('vxlan'))?.state, 'loaded'), 'loaded');
  t.same(calls, ['load kernel/net/ipv4/udp_tunnel.ko', 'load kernel/net/ipv6/ip6_udp_tunnel.ko', 'load kernel/drivers/net/vxlan/vxlan.ko udp_port=4790']);
  t.equal((await status('udp_tunnel'))?.requested, false, 'dependencies are listed, not requested');
  t.equal((await status('vxlan'))?.requested, true);
});

t.test('a dependency that is there already is not loaded again', async (t) => {
  calls.length = 0;
  await state.create(newResource(spec('dummy'), {}));
  t.equal(await until(async () => (await status('dummy'))?.state, 'loaded'), 'loaded');
  t.same(calls, ['load kernel/drivers/net/dummy.ko']);
});

t.test('unknown, broken and built-in modules', async (t) => {
  await state.create(newResource(spec('no-such-module'), {}));
  await state.create(newResource(spec('broken'), {}));
  await state.create(newResource(spec('ext4'), {}));
  t.match(await until(async () => (await status('no_such_module'))?.state, 'error') && (await status('no_such_module'))?.error,
    /module "no_such_module" is not shipped in this image \(5 modules are: broken, dummy, ip6_udp_tunnel, udp_tunnel, vxlan\)/);
  t.match(await until(async () => (await status('broken'))?.state, 'error') && (await status('broken'))?.error, /broken.ko is not a module this kernel can load \(ENOEXEC/);
  t.equal(await until(async () => (await status('ext4'))?.state, 'builtin'), 'builtin');
  t.equal((await status('vxlan'))?.state, 'loaded', 'the others are untouched');
});

t.test('destroying the spec unloads the module; its dependencies stay', async (t) => {
  calls.length = 0;
  await state.teardownAndDestroy(spec('dummy'));
  t.same(calls.filter((c) => !c.includes('broken')), ['unload dummy'], 'a failed spec is retried on each reconcile; nothing else loads');
  t.equal(await until(async () => (await status('dummy')) === undefined, true), true, 'no longer listed');
});
