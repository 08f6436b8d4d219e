// modules-dep: writes modules.dep for the modules shipped in the image, from each
// module's .modinfo, the way depmod does: one line per module, its path relative to
// /lib/modules/<release>, then every module it needs, directly or not, ordered so
// that loading the list from the right end to the left satisfies each one's symbols; and
// modules.alias, each module's `alias=` patterns (the devices it drives, by modalias).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { softdepPre } from '../machinery/kernel/modules-dep.ts';
import { moduleDepends, moduleName, readModinfo } from './modinfo.ts';

export interface ShippedModule {
  name: string; path: string; depends: string[]; aliases: string[];
  /** Modules to load before this one that its symbols do not show (MODULE_SOFTDEP("pre: ...")). */
  softPre?: string[];
}


export class ModuleDepError extends Error {
  constructor(message: string, readonly module: string) { super(message); }
}

export function scanModules(releaseDir: string): ShippedModule[] {
  const out: ShippedModule[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.endsWith('.ko')) {
        const info = readModinfo(readFileSync(p), p);
        out.push({
          name: moduleName(info, p), path: relative(releaseDir, p), depends: moduleDepends(info),
          aliases: info.get('alias') ?? [],
          ...(info.get('softdep') ? { softPre: info.get('softdep')!.flatMap(softdepPre) } : {}),
        });
      }
    }
  };
  walk(releaseDir);
  return out;
}

/** Every module `name` needs, deepest last (load right to left). Throws on a missing or circular dependency. */
export function dependencyClosure(name: string, byName: ReadonlyMap<string, ShippedModule>): ShippedModule[] {
  const order: ShippedModule[] = []; // post-order: a module after everything it needs
  const done = new Set<string>();
  const visit = (n: string, path: string[]) => {
    if (done.has(n)) return;
    if (path.includes(n)) throw new ModuleDepError(`circular module dependency: ${[...path, n].join(' -> ')}`, name);
    const m = byName.get(n);
    if (!m) throw new ModuleDepError(`module ${path.at(-1)} depends on ${n}, which is not shipped`, name);
    for (const d of m.depends) visit(d, [...path, n]);
    done.add(n);
    order.push(m);
  };
  visit(name, []);
  return order.slice(0, -1).reverse(); // drop the module itself; deepest dependency last
}

export function modulesDep(modules: readonly ShippedModule[]): string {
  const byName = new Map(modules.map((m) => [m.name, m]));
  return modules.map((m) => {
    const deps = dependencyClosure(m.name, byName).map((d) => d.path);
    return `${m.path}:${deps.length ? ' ' + deps.join(' ') : ''}\n`;
  }).join('');
}

/** modules.alias as depmod writes it: `alias <pattern> <module>`, one line per pattern. */
export function modulesAlias(modules: readonly ShippedModule[]): string {
  return modules.flatMap((m) => m.aliases.map((a) => `alias ${a} ${m.name}\n`)).join('');
}

/** modules.softdep as depmod writes it, for the modules with `pre:` modules: `softdep <module> pre: a b`. */
export function modulesSoftdep(modules: readonly ShippedModule[]): string {
  return modules.filter((m) => m.softPre?.length).map((m) => `softdep ${m.name} pre: ${m.softPre!.join(' ')}\n`)
    .join('');
}
