// modules-dep: reads /lib/modules/<release>/modules.dep (written by image/modules-dep.ts,
// or by depmod) and answers "which files, in which order, to load module X".
// Each line is `path: dep dep ...`, every dependency listed, deepest last.

export interface ModuleEntry {
  path: string; deps: string[];
  /** Modules to load first that modules.dep does not list (modules.softdep's `pre:`). */
  softPre?: string[];
}

/** kernel/net/ipv4/udp_tunnel.ko -> udp_tunnel; names use _ where files may use -. */
export function moduleNameOf(path: string): string {
  return path.replace(/^.*\//, '').replace(/\.ko(\.(xz|zst|gz))?$/, '').replace(/-/g, '_');
}

export function parseModulesDep(text: string): Map<string, ModuleEntry> {
  const out = new Map<string, ModuleEntry>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const path = line.slice(0, colon).trim();
    out.set(moduleNameOf(path), { path, deps: line.slice(colon + 1).trim().split(/\s+/).filter(Boolean) });
  }
  return out;
}

/** Files to load for a module, in order: deepest dependency first, the module itself last. */
export function loadOrder(entry: ModuleEntry): string[] {
  return [...entry.deps].reverse().concat(entry.path);
}

/** modules.builtin: one path per module compiled into the kernel. */
export function parseBuiltin(text: string): Set<string> {
  return new Set(text.split('\n').filter(Boolean).map(moduleNameOf));
}

/** The `pre:` modules of a soft dependency ("pre: a b post: c", as .modinfo and modules.softdep write it). */
export function softdepPre(text: string): string[] {
  const pre = /(?:^|\s)pre:\s*((?:(?!post:)\S+\s*)*)/.exec(text)?.[1] ?? '';
  return pre.trim().split(/\s+/).filter(Boolean).map((m) => m.replace(/-/g, '_'));
}

/** modules.softdep: `softdep <module> pre: a b post: c` -> module -> its pre: modules. */
export function parseSoftdepPre(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^softdep\s+(\S+)\s+(.*)$/.exec(line.trim());
    const pre = m ? softdepPre(m[2]!) : [];
    if (pre.length) out.set(m![1]!.replace(/-/g, '_'), pre);
  }
  return out;
}
