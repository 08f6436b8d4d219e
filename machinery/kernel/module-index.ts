// module-index: what the kernel-module controllers read: the modules this image ships
// (modules.dep, modules.builtin in /lib/modules/<release>) and what is loaded
// (/proc/modules), and the syscalls they end in.
import { release } from 'node:os';
import { join } from 'node:path';
import { errnoOf, isErrno } from '../../native/errno.ts';
import type { Native } from '../../native/index.ts';
import { readOptional } from '../sys/optional-fs.ts';
import {
  loadOrder, moduleNameOf, parseBuiltin, parseModulesDep, parseSoftdepPre, type ModuleEntry,
} from './modules-dep.ts';
import { parseProcModules, type LoadedModule } from './proc-modules.ts';

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

export const defaultModuleSources = (): ModuleSources => ({
  dir: join('/lib/modules', release()), procModules: '/proc/modules',
});

export const nativeLoader = (n: () => Native): ModuleLoader => ({
  load: (path, params) => n().finitModule(path, params),
  unload: (name) => n().deleteModule(name),
});

export interface ModuleIndex { modules: Map<string, ModuleEntry>; builtin: Set<string>; error?: string }

export function readModuleIndex(dir: string): ModuleIndex {
  // Optional: without modules.builtin a built-in module reads as "not shipped"; without modules.softdep
  // (an image built before softdeps were written) no module has soft dependencies.
  const builtin = parseBuiltin(readOptional(join(dir, 'modules.builtin')) ?? '');
  const soft = parseSoftdepPre(readOptional(join(dir, 'modules.softdep')) ?? '');
  const dep = readOptional(join(dir, 'modules.dep'));
  if (dep === undefined) {
    return {
      modules: new Map(), builtin, error: `cannot read ${join(dir, 'modules.dep')}: this image ships no modules`,
    };
  }
  const modules = parseModulesDep(dep);
  for (const [name, pre] of soft) {
    const entry = modules.get(name);
    if (entry) entry.softPre = pre;
  }
  return { modules, builtin };
}

/** Loaded modules; a kernel built without module support has no /proc/modules and nothing loaded. */
export function readLoaded(s: ModuleSources): Map<string, LoadedModule> {
  return new Map(parseProcModules(readOptional(s.procModules) ?? '').map((m) => [m.name, m]));
}

/** What a failed finit_module means, for a status a person reads. */
export function explainModuleLoad(path: string, e: unknown): string {
  switch (errnoOf(e)) {
    case 'ENOEXEC':
      return `${path} is not a module this kernel can load (ENOEXEC: built for another kernel or corrupt)`;
    case 'ENOENT': return `${path}: unknown symbol or missing file (ENOENT; a dependency missing from modules.dep?)`;
    case 'EINVAL': return `${path}: the kernel refused it or its parameters (EINVAL)`;
    case 'EPERM': return `${path}: not permitted (EPERM: CAP_SYS_MODULE missing, or module loading disabled)`;
    default: return (e as Error).message;
  }
}

export class ModuleLoadError extends Error {
  constructor(message: string, readonly module: string, readonly loaded: string[], options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Loads a shipped module and everything modules.dep says it needs, deepest first, after its soft
 * `pre:` dependencies (r8169 needs its PHY driver, realtek, before it probes: the kernel would ask
 * for it through a modprobe helper this image does not have), skipping what `loaded` holds (updated
 * as it goes); `params` go to the module itself. `modules` resolves the soft dependencies' names.
 * Returns the modules this call loaded; a failure throws ModuleLoadError with what it had loaded by then.
 */
export function loadWithDependencies(
  entry: ModuleEntry, dir: string, loader: ModuleLoader, loaded: Set<string>, params = '',
  modules?: ReadonlyMap<string, ModuleEntry>,
): string[] {
  const now: string[] = [];
  for (const pre of entry.softPre ?? []) {
    const soft = modules?.get(pre);
    if (!soft || loaded.has(pre)) continue; // not shipped (a soft dependency may be absent), or there
    try {
      now.push(...loadWithDependencies(soft, dir, loader, loaded, '', modules));
    } catch (e) {
      if (e instanceof ModuleLoadError) throw new ModuleLoadError(e.message, e.module, [...now, ...e.loaded]);
      throw e;
    }
  }
  for (const rel of loadOrder(entry)) {
    const mod = moduleNameOf(rel);
    if (loaded.has(mod)) continue;
    try {
      loader.load(join(dir, rel), rel === entry.path ? params : '');
    } catch (e) {
      // EEXIST: loaded meanwhile (by the kernel's request_module, or a device's coldplug).
      if (!isErrno(e, 'EEXIST')) throw new ModuleLoadError(explainModuleLoad(rel, e), mod, now, { cause: e });
    }
    loaded.add(mod);
    now.push(mod);
  }
  return now;
}
