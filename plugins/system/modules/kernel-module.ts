// kernel-module: KernelModuleSpec (id = module name) -> finit_module of the module and
// everything modules.dep says it needs, deepest first -> KernelModuleStatus for every
// module the kernel lists in /proc/modules, plus one per spec that could not be loaded
// (with why). Woken by module uevents, so modules loaded any other way show too.
// A finalizer holds the spec until the module is unloaded (delete_module) on destroy.
import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import type { Controller } from '../../../init/cosi/controller/contract.ts';
import type { Native, NativeError } from '../../../native/index.ts';
import { subscribeUevents } from '../../sdk/uevent.ts';
import { KERNEL_MODULE_SPEC_TYPE, KERNEL_MODULE_STATUS_TYPE, SYSTEM_NS, type KernelModuleSpecSpec, type KernelModuleStatusSpec } from '../types.ts';
import { loadOrder, moduleNameOf, parseBuiltin, parseModulesDep, type ModuleEntry } from './modules-dep.ts';
import { parseProcModules } from './proc-modules.ts';

/** The syscalls this controller ends in; the plugin passes the native addon's. */
export interface ModuleLoader {
  load(path: string, params: string): void;
  unload(name: string): void;
}

export interface ModuleSources {
  /** /lib/modules/<release> */
  dir: string;
  procModules: string;
}

export const defaultModuleSources = (): ModuleSources => ({ dir: join('/lib/modules', release()), procModules: '/proc/modules' });

export const nativeLoader = (n: () => Native): ModuleLoader => ({
  load: (path, params) => n().finitModule(path, params),
  unload: (name) => n().deleteModule(name),
});

const FINALIZER = 'kernel-module';

function explainLoad(path: string, e: NativeError): string {
  switch (e.code) {
    case 'ENOEXEC': return `${path} is not a module this kernel can load (ENOEXEC: built for another kernel or corrupt)`;
    case 'ENOENT': return `${path}: unknown symbol or missing file (ENOENT; a dependency missing from modules.dep?)`;
    case 'EINVAL': return `${path}: the kernel refused it or its parameters (EINVAL)`;
    case 'EPERM': return `${path}: not permitted (EPERM: CAP_SYS_MODULE missing, or module loading disabled)`;
    default: return e.message;
  }
}

/** Loads every file for `entry`; a module already there (EEXIST) counts as loaded. */
function loadWithDependencies(entry: ModuleEntry, params: string, dir: string, loader: ModuleLoader, loaded: Set<string>): void {
  for (const rel of loadOrder(entry)) {
    const name = moduleNameOf(rel);
    if (loaded.has(name)) continue;
    try {
      loader.load(join(dir, rel), rel === entry.path ? params : '');
    } catch (e) {
      if ((e as NativeError).code !== 'EEXIST') throw new Error(explainLoad(rel, e as NativeError), { cause: e });
    }
    loaded.add(name);
  }
}

function readIndex(dir: string): { modules: Map<string, ModuleEntry>; builtin: Set<string>; error?: string } {
  let builtin = new Set<string>();
  try { builtin = parseBuiltin(readFileSync(join(dir, 'modules.builtin'), 'utf8')); } catch { /* optional: without it a built-in module reads as "not shipped" */ }
  try {
    return { modules: parseModulesDep(readFileSync(join(dir, 'modules.dep'), 'utf8')), builtin };
  } catch (e) {
    return { modules: new Map(), builtin, error: `cannot read ${join(dir, 'modules.dep')}: ${(e as Error).message} (this image ships no modules)` };
  }
}

export function kernelModuleController(loader: ModuleLoader, sources: ModuleSources, n?: () => Native): Controller {
  return {
    name: 'kernel-module',
    inputs: () => [{ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE, kind: 'strong' }],
    outputs: () => [{ type: KERNEL_MODULE_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = n ? subscribeUevents(n(), 'module', () => ctx.requestReconcile()) : () => {};
      const sp = (id: string) => ({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE, id });
      try {
        while (await ctx.next()) {
          const index = readIndex(sources.dir);
          const readLoaded = () => parseProcModules(readFileSync(sources.procModules, 'utf8'));
          const loaded = new Set(readLoaded().map((m) => m.name));
          const failed = new Map<string, string>();
          const requested = new Set<string>();
          for (const r of await ctx.state.list({ namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE })) {
            const name = moduleNameOf(r.metadata.id);
            if (r.metadata.phase === 'tearingDown') {
              if (!r.metadata.finalizers.includes(FINALIZER)) continue;
              if (loaded.has(name)) {
                try { loader.unload(name); } catch (e) { ctx.log.warn(`unloading ${name}: ${(e as Error).message}; it stays loaded`); }
              }
              await ctx.state.removeFinalizer(sp(r.metadata.id));
              continue;
            }
            if (!r.metadata.finalizers.includes(FINALIZER)) await ctx.state.addFinalizer(sp(r.metadata.id));
            requested.add(name);
            if (loaded.has(name) || index.builtin.has(name)) continue;
            const entry = index.modules.get(name);
            if (!entry) {
              failed.set(name, index.error ?? `module "${name}" is not shipped in this image (${index.modules.size} modules are: ${[...index.modules.keys()].sort().join(', ')})`);
              continue;
            }
            try { loadWithDependencies(entry, (r.spec as KernelModuleSpecSpec).parameters ?? '', sources.dir, loader, loaded); } catch (e) { failed.set(name, (e as Error).message); }
          }

          const keep = new Set<string>();
          for (const m of readLoaded()) {
            keep.add(m.name);
            const status: KernelModuleStatusSpec = { state: 'loaded', size: m.size, refCount: m.refCount, usedBy: m.usedBy, requested: requested.has(m.name) };
            await ctx.state.put({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE, id: m.name }, status);
          }
          for (const name of requested) {
            if (keep.has(name)) continue;
            keep.add(name);
            const status: KernelModuleStatusSpec = index.builtin.has(name) ? { state: 'builtin', requested: true }
              : { state: 'error', requested: true, error: failed.get(name) ?? 'not loaded (the kernel does not list it in /proc/modules)' };
            await ctx.state.put({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE, id: name }, status);
          }
          await ctx.state.cleanup({ namespace: SYSTEM_NS, type: KERNEL_MODULE_STATUS_TYPE }, keep);
        }
      } finally { stop(); }
    },
  };
}
