// Lines of at most 120 characters in every TypeScript file we write (generated
// proto/gen aside), as in the codebases we follow (../shared/STYLE.md).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../native/errno.ts';
import { ROOT } from './lib/paths.ts';

const MAX = 120;

t.test(`no source line is longer than ${MAX} characters`, async (t) => {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n').filter((f) => f && !f.startsWith('proto/gen/'));
  t.ok(files.length > 100, `${files.length} files checked`);
  const long: string[] = [];
  for (const f of files) {
    let text: string;
    try { text = readFileSync(join(ROOT, f), 'utf8'); } catch (e) {
      if (isErrno(e, 'ENOENT')) continue; // listed, but deleted in the work tree
      throw e;
    }
    text.split('\n').forEach((line, i) => { if (line.length > MAX) long.push(`${f}:${i + 1} (${line.length})`); });
  }
  t.same(long, [], 'wrap these');
});
