// import-layers: the project's module layers, lowest first, and the check that no
// import runs up a layer or across to a sibling group, and that there is no import
// cycle. Contracts (the State, Controller and Plugin contracts, the layer list) sit
// below the engine and the plugins; the engine is handed its plugins by the
// composition roots (init/boot, init/commands) and never imports plugins/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

interface Layer { prefix: string; rank: number; group: string; why: string }

/** Longest prefix wins. A file may import its own group and any lower rank. */
export const LAYERS: readonly Layer[] = [
  { prefix: 'proto/', rank: 0, group: 'proto', why: 'generated wire and spec descriptors' },
  { prefix: 'native/', rank: 0, group: 'native', why: 'the addon and its typed interface' },
  { prefix: 'cosi/', rank: 1, group: 'cosi', why: 'the generic COSI runtime: state, resources, controllers, wire' },
  {
    prefix: 'machinery/', rank: 2, group: 'machinery',
    why: 'what PID 1 and the plugins share: contracts and spec messages, system facts, netlink, configuration '
      + 'documents, on-disk formats, certificates, kernel modules, the log and the version',
  },
  { prefix: 'plugins/', rank: 3, group: 'plugins', why: 'the plugins' },
  { prefix: 'init/engine/', rank: 3, group: 'engine', why: 'the engine: state, API server, supervisor' },
  { prefix: 'init/install/', rank: 3, group: 'engine', why: 'the engine\'s installer: a disk written from the medium' },
  { prefix: 'init/upgrade/', rank: 3, group: 'engine', why: 'the engine\'s upgrades: boot slots, trials, rollback' },
  { prefix: 'cli/', rank: 3, group: 'cli', why: 'cosictl' },
  { prefix: 'init/', rank: 4, group: 'roots', why: 'composition roots: PID 1, commands, main' },
  { prefix: 'image/', rank: 5, group: 'image', why: 'building artifacts' },
  {
    prefix: 'scripts/lib/run-program.ts', rank: 5, group: 'tools',
    why: 'a program run to its end (cosictl in tests and the QEMU harness): below qemu/, which uses it',
  },
  { prefix: 'qemu/', rank: 6, group: 'qemu', why: 'running artifacts under QEMU' },
  { prefix: 'scripts/', rank: 7, group: 'scripts', why: 'the npm run entry points' },
  { prefix: 'bin/', rank: 7, group: 'scripts', why: 'the npm bin' },
];

export function layerOf(file: string): Layer | undefined {
  return LAYERS.filter((l) => file.startsWith(l.prefix)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
}

const SKIP = new Set(['node_modules', 'out', 'build', '.git', '.scratch', '.tap']);

function sources(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((n) => {
    if (SKIP.has(n)) return [];
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(root, p)
      : /\.ts$/.test(n) && !n.endsWith('.d.ts') ? [relative(root, p)] : [];
  });
}

const IMPORT = new RegExp([
  /(?:^|\n)\s*(?:import|export)\s([^'"`;]*?)from\s+['"]([^'"]+)['"]/,
  /import\(\s*['"]([^'"]+)['"]\s*\)/,
  /(?:^|\n)\s*import\s+['"]([^'"]+)['"]/,
].map((r) => r.source).join('|'), 'g');

export interface Import { file: string; typeOnly: boolean }

/** The project files a file imports (relative specifiers only), as paths from the root. */
export function importsOf(root: string, file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  const out: Import[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[2] ?? m[3] ?? m[4];
    if (!spec?.startsWith('.')) continue;
    out.push({ file: relative(root, resolve(root, dirname(file), spec)), typeOnly: /^type\s/.test(m[1] ?? '') });
  }
  return out;
}

export interface ImportProblem { file: string; imports?: string; message: string }

/** Every import that runs up a layer or across groups, and every cycle (test files are harnesses: exempt). */
export function checkImports(root: string): ImportProblem[] {
  const files = sources(root).filter((f) => !f.endsWith('.test.ts'));
  const graph = new Map(files.map((f) => [f, importsOf(root, f)]));
  const problems: ImportProblem[] = [];
  for (const [file, deps] of graph) {
    const from = layerOf(file);
    if (!from) {
      problems.push({ file, message: 'is in no layer (add its folder to scripts/lib/import-layers.ts)' });
      continue;
    }
    for (const { file: dep } of deps) {
      const to = layerOf(dep);
      if (!to) continue;
      if (to.group === from.group || to.rank < from.rank) continue;
      problems.push({
        file, imports: dep,
        message: to.rank > from.rank
          ? `runs up: ${from.group} (rank ${from.rank}) imports ${to.group} (rank ${to.rank})`
          : `runs across: ${from.group} and ${to.group} are siblings (rank ${to.rank})`,
      });
    }
  }
  // Cycles: strongly connected components of more than one file (Tarjan). Type-only imports count: they vanish
  // from the JavaScript, but a reader who follows them walks in a circle all the same.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const { file: w } of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) problems.push({ file: scc.sort()[0]!, message: `import cycle: ${scc.sort().join(' -> ')}` });
    }
  };
  for (const f of graph.keys()) if (!idx.has(f)) visit(f);
  return problems;
}
