// The import rules as a test: no import runs up a layer or across sibling groups,
// and there is no cycle (scripts/lib/import-layers.ts has the layers and why).
import t from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkImports } from './lib/import-layers.ts';
import { ROOT } from './lib/paths.ts';

t.test('the project\'s imports keep to the layers, with no cycle', async (t) => {
  const problems = checkImports(ROOT);
  t.same(problems.map((p) => `${p.file}${p.imports ? ` -> ${p.imports}` : ''}: ${p.message}`), []);
});

t.test('the check finds an upward import, a sibling import and a cycle', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  const file = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  file('init/engine/engine.ts', "import { PLUGINS } from '../../plugins/index.ts';\n");
  file('plugins/index.ts', 'export const PLUGINS = [];\n');
  file('cosi/a.ts', "import { b } from './b.ts';\nexport const a = 1;\n");
  file('cosi/b.ts', "export { a as b } from './a.ts';\n");
  file('cosi/c.ts', "const m = await import('../machinery/x.ts');\n");
  file('machinery/x.ts', 'export const x = 1;\n');
  file('image/ok.ts', "import { x } from '../machinery/x.ts';\n");
  file('image/bad.ts', "import { y } from '../scripts/y.ts';\n");
  file('scripts/y.ts', 'export const y = 1;\n');
  const found = checkImports(root).map((p) => `${p.file}: ${p.message}`);
  t.same(found.sort(), [
    'cosi/a.ts: import cycle: cosi/a.ts -> cosi/b.ts',
    'cosi/c.ts: runs up: cosi (rank 1) imports machinery (rank 2)',
    'image/bad.ts: runs up: image (rank 5) imports scripts (rank 7)',
    'init/engine/engine.ts: runs across: engine and plugins are siblings (rank 3)',
  ]);
});
