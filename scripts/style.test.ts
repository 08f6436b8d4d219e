// The shape of every TypeScript file we write (generated proto/gen aside), as in the codebases we follow
// (../shared/STYLE.md): lines of at most 120 characters, and one statement per line (ESLint's
// max-statements-per-line at 1, counted by scripts/lib/statements-per-line.ts).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../native/errno.ts';
import { ROOT } from './lib/paths.ts';
import { crowdedLines } from './lib/statements-per-line.ts';

const MAX = 120;

/** Each source file with its text: tracked or new, not ignored; one listed but deleted in the work tree is skipped. */
function sources(): Array<{ file: string; text: string }> {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.ts', '*.cjs', '*.mjs'], {
    cwd: ROOT, encoding: 'utf8',
  })
    .split('\n').filter((f) => f && !f.startsWith('proto/gen/'));
  return files.flatMap((file) => {
    try {
      return [{ file, text: readFileSync(join(ROOT, file), 'utf8') }];
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return [];
      throw e;
    }
  });
}
const all = sources();

t.test(`no source line is longer than ${MAX} characters`, async (t) => {
  t.ok(all.length > 100, `${all.length} files checked`);
  const long = all.flatMap(({ file, text }) => text.split('\n')
    .flatMap((line, i) => (line.length > MAX ? [`${file}:${i + 1} (${line.length})`] : [])));
  t.same(long, [], 'wrap these');
});

t.test('one statement per line', async (t) => {
  const crowded = all.flatMap(({ file, text }) => crowdedLines(file, text)
    .map((c) => `${file}:${c.line} (${c.statements}): ${c.text}`));
  t.same(crowded, [], 'one statement to a line');
});

t.test('the counter counts as ESLint does', async (t) => {
  const count = (text: string) => crowdedLines('x.ts', text).map((c) => `${c.line}:${c.statements}`);
  t.same(count('const a = 1; const b = 2;\n'), ['1:2'], 'two declarations');
  t.same(count('if (a) return;\nfor (;;) x();\nlabel: while (a) b();\n'), [], 'an unbraced body is its parent\'s');
  t.same(count('if (a) b(); else c();\n'), ['1:2'], 'an else branch counts');
  t.same(count('try { a(); } finally { b(); }\n'), ['1:3'], 'braced bodies count');
  t.same(count('const f = () => { g(); };\n'), ['1:2'], 'an arrow function\'s body counts');
  t.same(count("const s = 'a; b; c;';\nswitch (x) {\n  case 1:\n    y();\n    break;\n}\n"), [],
    'a string is no statement; a case label is none either');
  t.same(count('switch (x) { case 1: y(); break; }\n'), ['1:3'], 'statements beside a case label');
});
