// kernel-module-spec: MergedKernelModuleSpec (id = module name) -> finit_module of the
// module and of everything modules.dep says it needs, deepest first ->
// KernelModuleSpecStatus, which lists what this spec loaded. When the spec goes those
// are unloaded (delete_module) in reverse, each only while nothing uses it and no other
// spec asks for it, so the kernel ends as it was.
import { layerOf } from '../../../machinery/model/layers.ts';
import { specController } from '../../../cosi/controller/spec-controller.ts';
import { type KernelModuleSpecSpec, type KernelModuleSpecStatusSpec } from '../types.ts';
import {
  loadWithDependencies, ModuleLoadError, readLoaded, readModuleIndex, type ModuleIndex, type ModuleLoader,
  type ModuleSources,
} from '../../../machinery/kernel/module-index.ts';
import {
  KERNEL_MODULE_SPEC_STATUS_TYPE, MERGED_KERNEL_MODULE_SPEC_TYPE, SYSTEM_NS,
} from '../../../proto/gen/resource-types.ts';

interface World { index: ModuleIndex; loaded: Set<string>; requested: Set<string> }

export function kernelModuleSpecController(loader: ModuleLoader, sources: ModuleSources) {
  return specController<KernelModuleSpecSpec, KernelModuleSpecStatusSpec, World>({
    name: 'kernel-module-spec', namespace: SYSTEM_NS, specType: MERGED_KERNEL_MODULE_SPEC_TYPE,
    statusType: KERNEL_MODULE_SPEC_STATUS_TYPE,
    observe: async (ctx) => ({
      index: readModuleIndex(sources.dir),
      loaded: new Set(readLoaded(sources).keys()),
      requested: new Set((await ctx.state.list({ namespace: SYSTEM_NS, type: MERGED_KERNEL_MODULE_SPEC_TYPE }))
        .filter((r) => r.metadata.phase === 'running').map((r) => r.metadata.id)),
    }),
    apply(name, s, prev, world) {
      const base = { layer: layerOf(s), ...(s.parameters ? { parameters: s.parameters } : {}) };
      const loadedBefore = prev?.loaded ?? [];
      if (world.index.builtin.has(name)) return { ...base, state: 'applied', builtin: true };
      if (world.loaded.has(name)) return { ...base, state: 'applied', builtin: false, loaded: loadedBefore };
      const entry = world.index.modules.get(name);
      if (!entry) {
        const shipped = [...world.index.modules.keys()].sort();
        const error = world.index.error
          ?? `module "${name}" is not shipped in this image (${shipped.length} modules are: ${shipped.join(', ')})`;
        return { ...base, state: 'error', builtin: false, error, loaded: loadedBefore };
      }
      const loaded = [...loadedBefore];
      const record = (mods: string[]) => {
        for (const m of mods) if (!loaded.includes(m)) loaded.push(m);
      };
      try {
        record(loadWithDependencies(entry, sources.dir, loader, world.loaded, s.parameters ?? '', world.index.modules));
      } catch (e) {
        if (!(e instanceof ModuleLoadError)) throw e;
        record(e.loaded);
        return { ...base, state: 'error', builtin: false, error: e.message, loaded };
      }
      return { ...base, state: 'applied', builtin: false, loaded };
    },
    failed: (_name, s, prev, error) => ({
      layer: layerOf(s), state: 'error', builtin: false, error, loaded: prev?.loaded ?? [],
    }),
    undo(name, prev, world) {
      for (const mod of [...(prev.loaded ?? [])].reverse()) {
        if (mod !== name && world.requested.has(mod)) continue; // another spec wants it
        const now = readLoaded(sources).get(mod);
        if (!now || now.refCount > 0) continue; // gone already, or still in use
        loader.unload(mod);
        world.loaded.delete(mod);
      }
    },
  });
}
