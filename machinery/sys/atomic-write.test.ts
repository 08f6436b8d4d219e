import t from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic, writeFileAtomicAsync } from './atomic-write.ts';

const scratch = mkdtempSync(join(tmpdir(), 'atomic-write-'));

for (const [name, write] of [
  ['writeFileAtomic', async (p: string, d: string, m?: number) => writeFileAtomic(p, d, m)],
  ['writeFileAtomicAsync', writeFileAtomicAsync],
] as const) {
  t.test(`${name}: replaces the file whole, with its mode, and leaves no temporary file`, async (t) => {
    const dir = join(scratch, name);
    mkdirSync(dir);
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'old');
    await write(file, 'new content', 0o640);
    t.equal(readFileSync(file, 'utf8'), 'new content');
    t.equal(statSync(file).mode & 0o777, 0o640);
    t.same(readdirSync(dir), ['config.yaml'], 'only the file');
  });

  t.test(`${name}: a directory that cannot take it is named, and the old file is kept`, async (t) => {
    const dir = join(scratch, `${name}-missing`);
    await t.rejects(write(join(dir, 'x'), 'data'), { message: new RegExp(`cannot write ${dir}/x: .*ENOENT`) });
    const kept = join(scratch, `${name}-kept`);
    mkdirSync(kept);
    writeFileSync(join(kept, 'f'), 'old');
    // A directory in the way of the rename: the write fails there, after the temporary file was written.
    mkdirSync(join(kept, 'd'));
    writeFileSync(join(kept, 'd', 'inside'), '');
    await t.rejects(write(join(kept, 'd'), 'data'), { message: /cannot write .*\/d: / });
    t.same(readdirSync(kept).sort(), ['d', 'f'], 'the temporary file removed');
    t.equal(readFileSync(join(kept, 'f'), 'utf8'), 'old');
  });
}
