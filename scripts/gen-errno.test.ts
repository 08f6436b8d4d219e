// The errno table is the kernel's list: the committed files are what the kernel source of this build makes.
import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  ERRNO_NAMES_H, ERRNO_TABLE_TS, errnoTable, generateErrnoFiles, parseErrnoHeader, renderErrnoFiles,
} from './gen-errno.ts';

t.test('the committed files match the kernel source\'s headers (the build regenerates them)', async (t) => {
  const { ts, h, source } = await generateErrnoFiles();
  t.equal(readFileSync(ERRNO_TABLE_TS, 'utf8'), ts, `native/gen/errno-table.ts from ${source}`);
  t.equal(readFileSync(ERRNO_NAMES_H, 'utf8'), h, `native/src/errno-names.h from ${source}`);
  t.match(ts, /\[123, \{ name: 'ENOMEDIUM'/, 'ENOMEDIUM, which libuv cannot name');
});

t.test('a header: numbers, aliases, and a define that is neither refused with its line', async (t) => {
  const defines = parseErrnoHeader([
    '#define EAGAIN 11 /* Try again */', '#define EWOULDBLOCK EAGAIN /* Operation would block */',
    '#define ENOMEDIUM\t123\t/* No medium found */', '#define NOT_AN_ERRNO 5', '#define EDEADLOCK EDEADLK',
  ].join('\n'), 'x.h');
  t.same(defines.map((d) => [d.name, d.value]), [
    ['EAGAIN', 11], ['EWOULDBLOCK', 'EAGAIN'], ['ENOMEDIUM', 123], ['EDEADLOCK', 'EDEADLK'],
  ]);
  t.throws(() => errnoTable(defines), /EDEADLOCK names EDEADLK, which is not defined before it/);
  const table = errnoTable(defines.slice(0, 3));
  t.same(table.byNumber.get(11), { name: 'EAGAIN', text: 'Try again' }, 'the first name is the number\'s');
  t.equal(table.byName.get('EWOULDBLOCK'), 11);
  t.throws(() => parseErrnoHeader('\n#define EODD (1 + 2)\n', 'y.h'),
    /y\.h:2: EODD is \(1 \+ 2\), neither a number nor a name/);
  const { h } = renderErrnoFiles(table, 'test');
  t.match(h, /case 123: return "ENOMEDIUM";/);
});
